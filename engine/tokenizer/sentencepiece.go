package tokenizer

import (
	"fmt"
	"math"

	"google.golang.org/protobuf/encoding/protowire"
)

// spmProto holds the fields of SentencePiece's ModelProto that matter.
type spmProto struct {
	pieces []string
	scores []float32
	types  []int32

	modelType    int64 // 1 unigram, 2 BPE
	byteFallback bool
	unk, bos     int32
	eos, pad     int32

	normName          string
	addDummyPrefix    bool
	removeExtraSpaces bool
	escapeSpaces      bool
}

// Field numbers of sentencepiece_model.proto.
const (
	fModelPieces     = 1
	fModelTrainer    = 2
	fModelNormalizer = 3

	fPiecePiece = 1
	fPieceScore = 2
	fPieceType  = 3

	fTrainerModelType    = 3
	fTrainerByteFallback = 35
	fTrainerUnkID        = 40
	fTrainerBosID        = 41
	fTrainerEosID        = 42
	fTrainerPadID        = 43

	fNormName          = 1
	fNormDummyPrefix   = 3
	fNormRemoveExtraWS = 4
	fNormEscapeWS      = 5
)

// walkFields calls fn for every field of one protobuf message.
func walkFields(b []byte, fn func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		var v []byte
		var x uint64
		switch typ {
		case protowire.VarintType:
			x, n = protowire.ConsumeVarint(b)
		case protowire.Fixed32Type:
			var u uint32
			u, n = protowire.ConsumeFixed32(b)
			x = uint64(u)
		case protowire.Fixed64Type:
			x, n = protowire.ConsumeFixed64(b)
		case protowire.BytesType:
			v, n = protowire.ConsumeBytes(b)
		default:
			n = protowire.ConsumeFieldValue(num, typ, b)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		if err := fn(num, typ, v, x); err != nil {
			return err
		}
	}
	return nil
}

func parseSPMProto(data []byte) (*spmProto, error) {
	p := &spmProto{modelType: 1, unk: 0, bos: 1, eos: 2, pad: -1,
		addDummyPrefix: true, removeExtraSpaces: true, escapeSpaces: true}
	err := walkFields(data, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) error {
		if typ != protowire.BytesType {
			return nil
		}
		switch num {
		case fModelPieces:
			piece, score, ptype := "", float32(0), int32(pieceNormal)
			err := walkFields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch {
				case num == fPiecePiece && typ == protowire.BytesType:
					piece = string(v)
				case num == fPieceScore && typ == protowire.Fixed32Type:
					score = math.Float32frombits(uint32(x))
				case num == fPieceType && typ == protowire.VarintType:
					ptype = int32(x)
				}
				return nil
			})
			p.pieces, p.scores, p.types = append(p.pieces, piece), append(p.scores, score), append(p.types, ptype)
			return err
		case fModelTrainer:
			return walkFields(v, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) error {
				if typ != protowire.VarintType {
					return nil
				}
				switch num {
				case fTrainerModelType:
					p.modelType = int64(x)
				case fTrainerByteFallback:
					p.byteFallback = x != 0
				case fTrainerUnkID:
					p.unk = int32(int64(x))
				case fTrainerBosID:
					p.bos = int32(int64(x))
				case fTrainerEosID:
					p.eos = int32(int64(x))
				case fTrainerPadID:
					p.pad = int32(int64(x))
				}
				return nil
			})
		case fModelNormalizer:
			return walkFields(v, func(num protowire.Number, typ protowire.Type, v []byte, x uint64) error {
				switch {
				case num == fNormName && typ == protowire.BytesType:
					p.normName = string(v)
				case num == fNormDummyPrefix && typ == protowire.VarintType:
					p.addDummyPrefix = x != 0
				case num == fNormRemoveExtraWS && typ == protowire.VarintType:
					p.removeExtraSpaces = x != 0
				case num == fNormEscapeWS && typ == protowire.VarintType:
					p.escapeSpaces = x != 0
				}
				return nil
			})
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("tokenizer: sentencepiece model: %w", err)
	}
	if len(p.pieces) == 0 {
		return nil, fmt.Errorf("tokenizer: sentencepiece model has no pieces")
	}
	return p, nil
}

// parseSentencePiece builds a tokenizer from a SentencePiece BPE model
// (Llama 2, TinyLlama). Like SentencePiece itself, control pieces such as
// <s> are not recognised in text unless tokenizer_config.json lists them
// as added tokens; user-defined pieces always are.
func parseSentencePiece(data []byte, cfg *hfConfig) (*Tokenizer, error) {
	p, err := parseSPMProto(data)
	if err != nil {
		return nil, err
	}
	if p.modelType != 2 {
		return nil, fmt.Errorf("tokenizer: sentencepiece model type %d is not supported (only BPE)", p.modelType)
	}
	if p.normName != "" && p.normName != "identity" {
		return nil, fmt.Errorf("tokenizer: sentencepiece normalizer %q is not supported (only identity)", p.normName)
	}
	n := int32(len(p.pieces))
	inRange := func(id int32) int32 {
		if id >= 0 && id < n {
			return id
		}
		return -1
	}
	m, err := newSPMModel(newVocab(p.pieces), p.scores, p.types, inRange(p.unk), p.byteFallback)
	if err != nil {
		return nil, err
	}
	b := newBuilder()
	b.model = m
	b.norm = normSPM{addDummyPrefix: p.addDummyPrefix, removeExtraSpaces: p.removeExtraSpaces, escapeSpaces: p.escapeSpaces}
	b.dec = decoderSpec{mode: decodeMetaspace, byteFallback: true}
	if p.addDummyPrefix {
		b.dec.stripLeading = 1
	}
	b.ids = SpecialIDs{BOS: inRange(p.bos), EOS: inRange(p.eos), EOT: -1, PAD: inRange(p.pad), UNK: inRange(p.unk)}
	if b.ids.BOS >= 0 {
		b.prefix = []int32{b.ids.BOS}
	}
	for i, t := range p.types {
		switch t {
		case pieceUserDefined:
			b.added = append(b.added, AddedToken{ID: int32(i), Content: p.pieces[i]})
		case pieceControl, pieceUnknown:
			b.special = append(b.special, int32(i))
		}
	}
	if err := b.applyConfig(cfg); err != nil {
		return nil, err
	}
	return b.build(), nil
}
