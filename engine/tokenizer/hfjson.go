package tokenizer

import (
	"encoding/json"
	"fmt"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// hfFile is the part of Hugging Face's tokenizer.json that is used.
type hfFile struct {
	AddedTokens   []hfAddedTokenDef `json:"added_tokens"`
	Normalizer    json.RawMessage   `json:"normalizer"`
	PreTokenizer  json.RawMessage   `json:"pre_tokenizer"`
	Model         hfModel           `json:"model"`
	PostProcessor json.RawMessage   `json:"post_processor"`
	Decoder       json.RawMessage   `json:"decoder"`
}

type hfModel struct {
	Type           string           `json:"type"`
	Vocab          map[string]int32 `json:"vocab"`
	Merges         json.RawMessage  `json:"merges"`
	UnkToken       *string          `json:"unk_token"`
	ByteFallback   bool             `json:"byte_fallback"`
	FuseUnk        bool             `json:"fuse_unk"`
	IgnoreMerges   bool             `json:"ignore_merges"`
	ContinuingPfx  *string          `json:"continuing_subword_prefix"`
	EndOfWordSufix *string          `json:"end_of_word_suffix"`
}

// hfComponent is any normalizer, pre-tokenizer, post-processor or decoder.
type hfComponent struct {
	Type           string            `json:"type"`
	Normalizers    []json.RawMessage `json:"normalizers"`
	PreTokenizers  []json.RawMessage `json:"pretokenizers"`
	Processors     []json.RawMessage `json:"processors"`
	Decoders       []json.RawMessage `json:"decoders"`
	Pattern        *hfPattern        `json:"pattern"`
	Content        json.RawMessage   `json:"content"`
	Prepend        string            `json:"prepend"`
	Behavior       string            `json:"behavior"`
	Invert         bool              `json:"invert"`
	AddPrefixSpace *bool             `json:"add_prefix_space"`
	UseRegex       *bool             `json:"use_regex"`
	Individual     bool              `json:"individual_digits"`
	Replacement    string            `json:"replacement"`
	PrependScheme  string            `json:"prepend_scheme"`
	Split          *bool             `json:"split"`
	StripLeft      bool              `json:"strip_left"`
	StripRight     bool              `json:"strip_right"`
	Start          int               `json:"start"`
	Single         []hfTemplateItem  `json:"single"`
	SpecialTokens  map[string]struct {
		IDs []int32 `json:"ids"`
	} `json:"special_tokens"`
	Cls []json.RawMessage `json:"cls"`
	Sep []json.RawMessage `json:"sep"`
}

type hfPattern struct {
	String *string `json:"String"`
	Regex  *string `json:"Regex"`
}

type hfTemplateItem struct {
	SpecialToken *struct{ ID string } `json:"SpecialToken"`
	Sequence     *struct{ ID string } `json:"Sequence"`
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

// parseHFJSON builds a tokenizer from tokenizer.json bytes.
func parseHFJSON(data []byte, cfg *hfConfig) (*Tokenizer, error) {
	var f hfFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokenizer: tokenizer.json: %w", err)
	}
	if f.Model.Type != "BPE" && !(f.Model.Type == "" && f.Model.Merges != nil) {
		return nil, fmt.Errorf("tokenizer: tokenizer.json model type %q is not supported (only BPE)", f.Model.Type)
	}
	if (f.Model.ContinuingPfx != nil && *f.Model.ContinuingPfx != "") || (f.Model.EndOfWordSufix != nil && *f.Model.EndOfWordSufix != "") {
		return nil, fmt.Errorf("tokenizer: BPE subword prefixes/suffixes are not supported")
	}
	v, err := vocabFromMap(f.Model.Vocab)
	if err != nil {
		return nil, err
	}
	merges, err := parseHFMerges(f.Model.Merges)
	if err != nil {
		return nil, err
	}
	unk := ""
	if f.Model.UnkToken != nil {
		unk = *f.Model.UnkToken
	}
	m, err := newBPEModel(v, merges, unk, f.Model.ByteFallback, f.Model.FuseUnk, f.Model.IgnoreMerges)
	if err != nil {
		return nil, err
	}
	b := newBuilder()
	b.model = m
	for _, a := range f.AddedTokens {
		if a.ID == nil {
			return nil, fmt.Errorf("tokenizer: added token %q has no id", a.Content)
		}
		b.added = append(b.added, a.token(*a.ID))
	}
	if b.norm, err = hfNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if b.pre, err = hfPreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	if b.dec, err = hfDecoder(f.Decoder, b.pre); err != nil {
		return nil, err
	}
	t := b.partial()
	if b.prefix, b.suffix, err = hfPostProcessor(f.PostProcessor, t); err != nil {
		return nil, err
	}
	if len(b.prefix) > 0 {
		b.ids.BOS = b.prefix[0]
	}
	if err := b.applyConfig(cfg); err != nil {
		return nil, err
	}
	return b.build(), nil
}

// parseHFMerges accepts merges as "a b" strings or as [a, b] pairs.
func parseHFMerges(raw json.RawMessage) ([][2]string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var strs []string
	if err := json.Unmarshal(raw, &strs); err == nil {
		out := make([][2]string, len(strs))
		for i, s := range strs {
			a, c, ok := strings.Cut(s, " ")
			if !ok {
				return nil, fmt.Errorf("tokenizer: merge %d %q is not two tokens", i, s)
			}
			out[i] = [2]string{a, c}
		}
		return out, nil
	}
	var pairs [][]string
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, fmt.Errorf("tokenizer: merges: %w", err)
	}
	out := make([][2]string, len(pairs))
	for i, p := range pairs {
		if len(p) != 2 {
			return nil, fmt.Errorf("tokenizer: merge %d has %d parts", i, len(p))
		}
		out[i] = [2]string{p[0], p[1]}
	}
	return out, nil
}

func hfNormalizer(raw json.RawMessage) (normalizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c hfComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("tokenizer: normalizer: %w", err)
	}
	switch c.Type {
	case "Sequence":
		var q normSequence
		for _, r := range c.Normalizers {
			n, err := hfNormalizer(r)
			if err != nil {
				return nil, err
			}
			if n != nil {
				q = append(q, n)
			}
		}
		return q, nil
	case "NFC":
		return normUnicode{norm.NFC}, nil
	case "NFD":
		return normUnicode{norm.NFD}, nil
	case "NFKC":
		return normUnicode{norm.NFKC}, nil
	case "NFKD":
		return normUnicode{norm.NFKD}, nil
	case "Prepend":
		return normPrepend{c.Prepend}, nil
	case "Lowercase":
		return normLowercase{}, nil
	case "Strip":
		return normStrip{c.StripLeft, c.StripRight}, nil
	case "Replace":
		var with string
		if err := json.Unmarshal(c.Content, &with); err != nil {
			return nil, fmt.Errorf("tokenizer: Replace normalizer content: %w", err)
		}
		if c.Pattern == nil {
			return nil, fmt.Errorf("tokenizer: Replace normalizer without pattern")
		}
		if c.Pattern.Regex != nil {
			re, err := compilePattern(*c.Pattern.Regex)
			if err != nil {
				return nil, err
			}
			return normReplace{re: re, with: with}, nil
		}
		if c.Pattern.String == nil {
			return nil, fmt.Errorf("tokenizer: Replace normalizer with an empty pattern")
		}
		return normReplace{literal: *c.Pattern.String, with: with}, nil
	}
	return nil, fmt.Errorf("tokenizer: normalizer %q is not supported", c.Type)
}

func hfPreTokenizer(raw json.RawMessage) (preTokenizer, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c hfComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("tokenizer: pre_tokenizer: %w", err)
	}
	switch c.Type {
	case "Sequence":
		var q preSequence
		for _, r := range c.PreTokenizers {
			p, err := hfPreTokenizer(r)
			if err != nil {
				return nil, err
			}
			if p != nil {
				q = append(q, p)
			}
		}
		return q, nil
	case "Split":
		if c.Pattern == nil {
			return nil, fmt.Errorf("tokenizer: Split pre-tokenizer without pattern")
		}
		p := &preSplit{invert: c.Invert}
		var ok bool
		if p.behavior, ok = splitBehaviors[c.Behavior]; !ok {
			return nil, fmt.Errorf("tokenizer: Split behavior %q is not supported", c.Behavior)
		}
		switch {
		case c.Pattern.Regex != nil:
			re, err := compilePattern(*c.Pattern.Regex)
			if err != nil {
				return nil, err
			}
			p.re = re
		case c.Pattern.String != nil:
			p.literal = *c.Pattern.String
		default:
			return nil, fmt.Errorf("tokenizer: Split pre-tokenizer with an empty pattern")
		}
		return p, nil
	case "ByteLevel":
		p := preByteLevel{addPrefixSpace: c.AddPrefixSpace != nil && *c.AddPrefixSpace}
		if c.UseRegex == nil || *c.UseRegex {
			p.re = reGPT2
		}
		return p, nil
	case "Digits":
		return preDigits{individual: c.Individual}, nil
	case "Metaspace":
		p := preMetaspace{replacement: c.Replacement, prepend: c.PrependScheme, splitWords: c.Split == nil || *c.Split}
		if p.replacement == "" {
			p.replacement = metaSpace
		}
		if p.prepend == "" {
			p.prepend = "always"
			if c.AddPrefixSpace != nil && !*c.AddPrefixSpace {
				p.prepend = "never"
			}
		}
		return p, nil
	case "WhitespaceSplit":
		return preWhitespaceSplit{}, nil
	case "Whitespace":
		return &preSplit{re: mustPattern(`\w+|[^\w\s]+`), behavior: splitRemoved, invert: true}, nil
	}
	return nil, fmt.Errorf("tokenizer: pre-tokenizer %q is not supported", c.Type)
}

var splitBehaviors = map[string]splitBehavior{
	"Isolated": splitIsolated, "Removed": splitRemoved, "MergedWithPrevious": splitMergedWithPrevious,
	"MergedWithNext": splitMergedWithNext, "Contiguous": splitContiguous,
}

// hfDecoder reduces the decoder pipeline to a decoderSpec.
func hfDecoder(raw json.RawMessage, pre preTokenizer) (decoderSpec, error) {
	var d decoderSpec
	if isNull(raw) {
		// No decoder: infer from the pre-tokenizer.
		if hasByteLevel(pre) {
			d.mode = decodeByteLevel
		} else {
			d.mode = decodeMetaspace
		}
		return d, nil
	}
	d.mode = decodeMetaspace
	var walk func(raw json.RawMessage) error
	walk = func(raw json.RawMessage) error {
		var c hfComponent
		if err := json.Unmarshal(raw, &c); err != nil {
			return fmt.Errorf("tokenizer: decoder: %w", err)
		}
		switch c.Type {
		case "Sequence":
			for _, r := range c.Decoders {
				if err := walk(r); err != nil {
					return err
				}
			}
		case "ByteLevel":
			d.mode = decodeByteLevel
		case "ByteFallback":
			d.byteFallback = true
		case "Fuse":
		case "Replace":
			var with string
			_ = json.Unmarshal(c.Content, &with)
			if c.Pattern == nil || c.Pattern.String == nil || *c.Pattern.String != metaSpace || with != " " {
				return fmt.Errorf("tokenizer: decoder Replace other than \"▁\" -> \" \" is not supported")
			}
		case "Strip":
			var content string
			_ = json.Unmarshal(c.Content, &content)
			if content != " " {
				return fmt.Errorf("tokenizer: decoder Strip of %q is not supported", content)
			}
			d.stripLeading = c.Start
		case "Metaspace":
			if c.PrependScheme != "never" && (c.AddPrefixSpace == nil || *c.AddPrefixSpace) {
				d.stripLeading = 1
			}
		default:
			return fmt.Errorf("tokenizer: decoder %q is not supported", c.Type)
		}
		return nil
	}
	return d, walk(raw)
}

func hasByteLevel(p preTokenizer) bool {
	switch p := p.(type) {
	case preByteLevel:
		return true
	case preSequence:
		for _, q := range p {
			if hasByteLevel(q) {
				return true
			}
		}
	}
	return false
}

// hfPostProcessor returns the ids added before and after a single sequence.
func hfPostProcessor(raw json.RawMessage, t *Tokenizer) (prefix, suffix []int32, err error) {
	if isNull(raw) {
		return nil, nil, nil
	}
	var c hfComponent
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, nil, fmt.Errorf("tokenizer: post_processor: %w", err)
	}
	switch c.Type {
	case "Sequence":
		for _, r := range c.Processors {
			p, s, err := hfPostProcessor(r, t)
			if err != nil {
				return nil, nil, err
			}
			prefix, suffix = append(prefix, p...), append(suffix, s...)
		}
		return prefix, suffix, nil
	case "ByteLevel":
		return nil, nil, nil
	case "TemplateProcessing":
		seenA := false
		for _, it := range c.Single {
			switch {
			case it.Sequence != nil:
				seenA = true
			case it.SpecialToken != nil:
				st, ok := c.SpecialTokens[it.SpecialToken.ID]
				if !ok {
					return nil, nil, fmt.Errorf("tokenizer: template special token %q is not defined", it.SpecialToken.ID)
				}
				if seenA {
					suffix = append(suffix, st.IDs...)
				} else {
					prefix = append(prefix, st.IDs...)
				}
			}
		}
		return prefix, suffix, nil
	case "RobertaProcessing", "BertProcessing":
		id := func(pair []json.RawMessage) ([]int32, error) {
			var n int32
			if len(pair) != 2 || json.Unmarshal(pair[1], &n) != nil {
				return nil, fmt.Errorf("tokenizer: %s cls/sep must be [token, id]", c.Type)
			}
			return []int32{n}, nil
		}
		if prefix, err = id(c.Cls); err != nil {
			return nil, nil, err
		}
		if suffix, err = id(c.Sep); err != nil {
			return nil, nil, err
		}
		return prefix, suffix, nil
	}
	return nil, nil, fmt.Errorf("tokenizer: post-processor %q is not supported", c.Type)
}
