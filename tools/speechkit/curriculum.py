"""What the training windows hold as training progresses."""


def ramp(p, a, b):
    return min(1.0, max(0.0, (p - a) / (b - a)))


def mix(p):
    """What the examples hold at training progress p (0..1 of the planned total).
    The first call's mix from step 0 (75 % timestamped, 35 % long-form, prompts
    on all, noise on 70 %) left the decoder learning only a language prior:
    start on clean single utterances without prompts or timestamps, then bring
    the rest in. The second session's ramps (long-form from 0.3, full at 0.6,
    at most 21 % of the examples) left long-form decoding unlearned (WER 92.5 %
    on the passage): long-form and prompts now come in from 0.1-0.15, full at
    0.4, and long-form is half of the timestamped windows."""
    return {
        "timestamps": 0.6 * ramp(p, 0.1, 0.35),    # of all windows
        "long": 0.5 * ramp(p, 0.15, 0.4),          # of the timestamped ones: 30-s long-form
        "cut": 0.5 * ramp(p, 0.15, 0.4),           # a window ending inside an utterance
        "multi": 0.4 * ramp(p, 0.1, 0.35),         # a no-timestamp window going on to another utterance
        "glossary": 0.5 * ramp(p, 0.15, 0.4),
        "previous": 0.5 * ramp(p, 0.15, 0.4),
        "augment": ramp(p, 0.1, 0.4),              # noise/reverb share and depth
        "specaug": ramp(p, 0.05, 0.3),             # time and frequency masks
    }
