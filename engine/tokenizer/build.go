package tokenizer

import "sort"

// builder collects the parts every loader produces and assembles the
// Tokenizer, applying tokenizer_config.json when there is one.
type builder struct {
	model          model
	norm           normalizer
	pre            preTokenizer
	added          []AddedToken
	special        []int32 // special for decoding although not matched in text
	dec            decoderSpec
	prefix, suffix []int32
	ids            SpecialIDs
	names          struct{ bos, eos, pad, unk, eot string } // fallbacks by token text
}

func newBuilder() *builder {
	return &builder{ids: SpecialIDs{BOS: -1, EOS: -1, EOT: -1, PAD: -1, UNK: -1}}
}

// applyConfig merges tokenizer_config.json into the builder.
func (b *builder) applyConfig(c *hfConfig) error {
	if c == nil {
		return nil
	}
	extra, err := c.addedTokens()
	if err != nil {
		return err
	}
	have := map[int32]bool{}
	for _, a := range b.added {
		have[a.ID] = true
	}
	sort.Slice(extra, func(i, j int) bool { return extra[i].ID < extra[j].ID })
	for _, a := range extra {
		if !have[a.ID] {
			b.added = append(b.added, a)
		}
	}
	set := func(dst *string, n tokenName) {
		if n != "" {
			*dst = string(n)
		}
	}
	set(&b.names.bos, c.BOS)
	set(&b.names.eos, c.EOS)
	set(&b.names.pad, c.PAD)
	set(&b.names.unk, c.UNK)
	if c.Cleanup != nil {
		b.dec.cleanup = *c.Cleanup
	}
	// An explicit add_bos_token/add_eos_token wins over the post-processor,
	// as transformers' Llama-style tokenizers rebuild it from these flags.
	// Names from the config win over ids inferred from the post-processor.
	if c.BOS != "" {
		b.ids.BOS = -1
	}
	if c.EOS != "" {
		b.ids.EOS = -1
	}
	if c.AddBOS != nil || c.AddEOS != nil {
		t := b.partial()
		if c.AddBOS != nil {
			b.prefix = nil
			if id, ok := t.TokenID(b.names.bos); *c.AddBOS && ok {
				b.prefix = []int32{id}
			}
		}
		if c.AddEOS != nil {
			b.suffix = nil
			if id, ok := t.TokenID(b.names.eos); *c.AddEOS && ok {
				b.suffix = []int32{id}
			}
		}
	}
	return nil
}

// partial is a Tokenizer good enough for token lookups.
func (b *builder) partial() *Tokenizer {
	t := &Tokenizer{model: b.model, added: map[int32]AddedToken{}}
	for _, a := range b.added {
		t.added[a.ID] = a
	}
	return t
}

func (b *builder) build() *Tokenizer {
	t := b.partial()
	t.norm, t.pre, t.dec = b.norm, b.pre, b.dec
	t.prefix, t.suffix = b.prefix, b.suffix
	t.special = map[int32]bool{}
	var raw, norm []AddedToken
	for _, a := range b.added {
		if a.Normalized {
			norm = append(norm, a)
		} else {
			raw = append(raw, a)
		}
		if a.Special {
			t.special[a.ID] = true
		}
	}
	for _, id := range b.special {
		t.special[id] = true
	}
	t.raw, t.normalized = newAddedSet(raw), newAddedSet(norm)
	ids := b.ids
	// Names from the configuration may be any token; the conventional
	// fallbacks must be added or control tokens, since byte-level
	// vocabularies hold "<s>" as ordinary text.
	resolve := func(dst *int32, configured string, fallbacks ...string) {
		if *dst >= 0 {
			return
		}
		if id, ok := t.TokenID(configured); ok && configured != "" {
			*dst = id
			return
		}
		for _, n := range fallbacks {
			if id, ok := t.TokenID(n); ok && (t.special[id] || t.added[id].Content == n) {
				*dst = id
				return
			}
		}
	}
	resolve(&ids.BOS, b.names.bos, "<s>", "<|begin_of_text|>", "<|startoftext|>", "<bos>")
	resolve(&ids.EOS, b.names.eos, "</s>", "<|end_of_text|>", "<|endoftext|>", "<eos>")
	resolve(&ids.UNK, b.names.unk, "<unk>")
	resolve(&ids.PAD, b.names.pad, "<pad>", "<|finetune_right_pad_id|>")
	resolve(&ids.EOT, b.names.eot, "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|end_of_turn|>")
	t.ids = ids
	seen := map[int32]bool{}
	addStop := func(id int32) {
		if id >= 0 && !seen[id] {
			seen[id] = true
			t.stops = append(t.stops, id)
		}
	}
	addStop(ids.EOS)
	addStop(ids.EOT)
	for _, n := range []string{"<|eot_id|>", "<|eom_id|>", "<|end_of_text|>", "<|im_end|>", "<|end|>", "<|endoftext|>", "<end_of_turn>"} {
		for _, a := range b.added {
			if a.Content == n {
				addStop(a.ID)
			}
		}
	}
	return t
}
