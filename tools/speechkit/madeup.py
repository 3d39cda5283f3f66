"""Made-up vocabulary terms for training (the seventh session on).

Each of the 60 real terms has one "sounds like" rendering, heard in half the
corpus, so a model can learn each sound-to-spelling pair by heart instead of
copying the glossary entry that sounds like what it hears (the sixth session:
recall 7/50 with the glossary, 6/50 without). A made-up term's spelling is
seen in no text but its glossary, and its windows always carry that glossary
(examples.py), so copying from the prompt is the only way to get it right.
The "sounds like" side is plain English syllable-words espeak-ng reads as
written; the term is their concatenation respelled. The 60 evaluation terms
are left as they are.
"""

SYLLABLES = (
    "bay bee bo bun by cam can cor cue dan dee dex dot fan fay fin fo for gal gee go gum hal hay "
    "ho jam jay jo kay kin lee lo low lum may me mo mon nay neat no nor pal pay pea po pod ran ray "
    "ree ro rum sal say see so sun tan tay tea toe tor van vee vo way wee win yo zee zen zo"
).split()

# Respellings: what the term writes for a letter group of its sounds (one applied per
# occurrence, at random), so the spelling is not the sounds' letters run together.
RESPELL = [("ee", "i"), ("ay", "ei"), ("c", "k"), ("k", "c"), ("s", "z"), ("o", "oh"), ("y", "i"),
           ("ea", "ee"), ("ue", "ew"), ("ow", "ou"), ("f", "ph"), ("j", "dj")]


def make_terms(rnd, n):
    """n distinct (term, sounds) pairs: 2-3 syllable-words, respelled and capitalized."""
    out, seen = [], set()
    while len(out) < n:
        sw = [rnd.choice(SYLLABLES) for _ in range(rnd.choice((2, 2, 3)))]
        t = "".join(sw)
        for a, b in RESPELL:
            if a in t and rnd.random() < 0.5:
                t = t.replace(a, b, 1)
        t = t[0].upper() + t[1:]
        sounds = " ".join(sw)
        if t in seen or t.lower() == sounds.replace(" ", ""):
            continue                       # one spelling per term, and never the sounds run together
        seen.add(t)
        out.append((t, sounds))
    return out


def apply(rnd, train, terms, share):
    """Gives a share of the training items that hold a real term a made-up one instead
    (same carrier), marked "madeup". Returns how many."""
    k = 0
    for it in train:
        if it["term"] and rnd.random() < share:
            term, sounds = rnd.choice(terms)
            it["text"] = _swap(it["text"], it["term"], term)
            it["spoken"] = _swap(it["spoken"], it["sounds"], sounds)
            it.update(term=term, sounds=sounds, madeup=True)
            k += 1
    return k


def _swap(s, old, new):
    i = s.rindex(old)                      # the carrier comes last: its term is the last occurrence
    return s[:i] + new + s[i + len(old):]


def _check():
    import random
    rnd = random.Random(7)
    terms = make_terms(rnd, 2000)
    assert len({t for t, _ in terms}) == 2000
    assert all(t.lower() != s.replace(" ", "") for t, s in terms), "a spelling differs from its sounds"
    assert all(all(w in SYLLABLES for w in s.split()) for _, s in terms)
    train = [{"id": "t0", "text": "So it goes. I would pick kubectl.", "spoken": "So it goes. I would pick cube cuddle.",
              "term": "kubectl", "sounds": "cube cuddle"},
             {"id": "t1", "text": "Plain.", "spoken": "Plain.", "term": None, "sounds": None}]
    n = apply(random.Random(1), train, [("Zenkei", "zen kay")], 1.0)
    assert n == 1 and train[0] == {"id": "t0", "text": "So it goes. I would pick Zenkei.",
                                   "spoken": "So it goes. I would pick zen kay.", "term": "Zenkei",
                                   "sounds": "zen kay", "madeup": True}, train[0]
    assert "madeup" not in train[1]
    print("madeup.py: 2000 terms and the swap checked;", ", ".join(f"{t} = {s}" for t, s in terms[:4]))


if __name__ == "__main__":
    _check()
