"""Text for the tokenizer comparison: a training corpus and the test strings.

Everything is generated from a fixed seed, so runs are reproducible and
nothing is downloaded. The test strings aim at the places tokenizers differ:
Unicode classes (accents, combining marks, CJK, emoji with joiners and
modifiers, right-to-left scripts, digits of other scripts), whitespace runs
of every kind, GPT-2's contractions in both cases, punctuation runs,
special tokens inside text, words longer than WordPiece's 100 characters,
and random valid UTF-8 from all planes.
"""

import random

WORDS = """the of and to in is was for that with as on by at from it he she they we you
his her their our this these those be are were been have has had do does did not no
yes can could will would shall should may might must new old first last long great
little own other right big high different small large next early young important few
public bad same able time year people way day man woman thing world life hand part child
eye place work week case point government company number group problem fact water
tokenizer transformer attention gradient embedding vocabulary merge byte piece model
train infer compile runtime kernel tensor matrix vector layer norm softmax sample
""".split()

ACCENTED = ["café", "naïve", "résumé", "Ångström", "Straße", "İstanbul", "ΣΊΣΥΦΟΣ", "façade",
            "jalapeño", "Crème brûlée", "Zoë", "Øresund", "Łódź", "Dvořák", "ﬁnance", "ǅemal",
            "Ǉubljana", "ΐ", "e\u0301", "a\u0308\u0304", "n\u0303o", "\u1e9b\u0323",
            "Ａｂｃ", "ℌ", "ǰ", "İİ", "ΣΑΣ σας", "Русский язык", "Ελληνικά", "Ёлка",
            "Tiếng Việt", "Hàn Quốc", "Ægir", "þorn"]
CJK = ["中文字符", "日本語のテキスト", "한국어 문장", "漢字とかな", "𠀋𡈽𡌛", "㐀㐁", "中国の人口は14億", "ｶﾀｶﾅ",
       "大規模言語モデル", "繁體中文", "조선말", "ㄱㄴㄷ"]
RTL = ["שלום עולם", "مرحبا بالعالم", "العربية 123", "עברית, וגם English", "فارسی ۱۲۳",
       "\u200fRTL mark\u200e", "اللُّغَةُ"]
EMOJI = ["😀", "👍🏽", "👨‍👩‍👧‍👦", "🇫🇷🇩🇪", "❤️", "🏳️‍🌈", "🤖 bot", "✨new✨", "🙂🙃", "☃", "⌚",
         "🧑🏿‍💻", "1️⃣", "🔥🔥🔥"]
INDIC = ["हिन्दी", "नमस्ते दुनिया", "தமிழ்", "ಕನ್ನಡ", "বাংলা", "१२३४", "ภาษาไทย", "ພາສາລາວ",
         "မြန်မာ", "ᏣᎳᎩ", "ꦗꦮ"]
DIGITS = ["0", "7", "42", "3.14159", "1,000,000", "2024-01-01", "12:30:45", "१२३", "٣٤٥", "²³",
          "½", "Ⅻ", "①②", "0x1F", "1e-9", "99%", "$5.00", "€10", "£3", "¥500", "+1 (555) 010-9999",
          "v1.2.3", "３４５"]
PUNCT = ["!", "!!!", "...", "?!", "—", "–", "«quoted»", "“curly”", "‘single’", "(parens)",
         "[brackets]", "{braces}", "<tag/>", "@user", "#hash", "$var", "%", "^", "&amp;", "*",
         "_under_", "~tilde", "`code`", "|pipe|", "\\back\\", "/path/to/file", "a,b;c:d",
         "¿Qué?", "¡Hola!", "。", "、", "「」", "・", "…", "§", "¶", "†", "‼", "⁉", "※",
         "'", "''", "'''", "\"", "\"\"", "-", "--", "->", "=>", "==", "!=", "::", "/*", "*/"]
CONTRACTIONS = ["I'm", "you're", "he's", "she'll", "we've", "they'd", "it's", "don't",
                "can't", "won't", "I'M", "YOU'RE", "HE'S", "WE'VE", "THEY'LL", "I'D", "DON'T",
                "'s", "'t", "'re", "'ve", "'m", "'ll", "'d", "'S", "'T", "'RE", "'LL", "'D",
                "o'clock", "rock'n'roll", "Ma'am", "y'all'd've", "'tis", "it''s", "' s",
                "’s", "don’t", " 's", "x's'", "'''s"]
WHITESPACE = [" ", "  ", "   ", "\t", "\t\t", "\n", "\n\n", "\r\n", " \n ", "\u00a0", "\u3000",
              "\u2028", "\u2029", "\u2003", "\u202f", "\u205f", "\u1680", "\u0085", "\x0b",
              "\x0c", " \t \n", "\u200b", "\ufeff", "\u180e"]
# Special tokens, and the added tokens compare_hf.py gives some tokenizers
# (lstrip <mask>, rstrip [X], single-word "hello world" and [NEW], and
# "Ümlaut", matched after normalization).
SPECIALS = ["<|endoftext|>", "[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]", "<s>", "</s>", "<unk>",
            "<|endoftext|><|endoftext|>", "<|endoftext", "[cls]", "<S>", "<mask>", "  <mask>  ",
            "[X]", "[X]   ", "hello world", "xhello world", "hello worlds", "[NEW]", "a[NEW]",
            "Ümlaut", "ÜMLAUT", "umlaut", "U\u0308mlaut"]
CONTROLS = ["\x00", "\x01", "\x07", "\x1b[31m", "\x7f", "\ufffd", "\u200d", "\u2066", "\ue000",
            "\U000f0000", "\U000e0041", "\u00ad"]


def assigned_code_point(rng):
    """A random code point that is not a surrogate, weighted towards the
    BMP; unassigned and private-use ones included on purpose."""
    r = rng.random()
    if r < 0.5:
        cp = rng.randrange(0x80, 0x3000)
    elif r < 0.8:
        cp = rng.randrange(0x3000, 0x10000)
    else:
        cp = rng.randrange(0x10000, 0x110000)
    if 0xD800 <= cp <= 0xDFFF:
        cp = 0x41 + cp % 26
    return chr(cp)


def word(rng):
    w = rng.choice(WORDS)
    r = rng.random()
    if r < 0.15:
        w = w.capitalize()
    elif r < 0.2:
        w = w.upper()
    return w


def fragment(rng):
    r = rng.random()
    pools = [(0.40, None), (0.47, ACCENTED), (0.53, CJK), (0.57, RTL), (0.62, EMOJI),
             (0.66, INDIC), (0.73, DIGITS), (0.82, PUNCT), (0.89, CONTRACTIONS),
             (0.93, SPECIALS), (0.96, CONTROLS), (1.01, "random")]
    for limit, pool in pools:
        if r < limit:
            break
    if pool is None:
        return word(rng)
    if pool == "random":
        return "".join(assigned_code_point(rng) for _ in range(rng.randint(1, 6)))
    return rng.choice(pool)


def sentence(rng, n_min=1, n_max=14):
    parts = []
    for _ in range(rng.randint(n_min, n_max)):
        parts.append(fragment(rng))
        parts.append(rng.choice(WHITESPACE) if rng.random() < 0.15 else
                     ("" if rng.random() < 0.2 else " "))
    return "".join(parts)


def training_corpus(seed=1234, lines=3000):
    rng = random.Random(seed)
    corpus = []
    for _ in range(lines):
        corpus.append(" ".join(word(rng) for _ in range(rng.randint(4, 16))))
        if rng.random() < 0.6:
            corpus.append(sentence(rng))
    return corpus


def fixed_strings():
    """Hand-picked edge cases, each once."""
    out = ["", " ", "a", "A", "'", "s", "\n", "hello world", " hello", "hello ", "  hello  world  ",
           "Hello World!", "HELLO", "hello\nworld", "hello\tworld", "hello\r\nworld",
           "a" * 99, "a" * 100, "a" * 101, "b" * 2000, "ab" * 1000, "x" * 100 + "ü",
           "é" * 101, "中" * 300, "😀" * 200, "1" * 500, "12345678901234567890",
           "supercalifragilisticexpialidocious" * 8, " " * 300, "\n" * 50, "\t \t \t",
           "pre<|endoftext|>post", "<|endoftext|>", " <|endoftext|> ", "[CLS] hi [SEP]",
           "<s>hello</s>", " <s> ", "<unk>", "x<s>", "[MASK]ed", "End.<|endoftext|>Start",
           "I'm here. You're there! He's gone? We've won; they'll see, I'd say.",
           "DON'T SHOUT, I'M LISTENING", "it's   spaced   out   ", "trailing space ",
           "multi\n\n\nline\n", " leading", "\u00a0nbsp\u00a0", "mixed\u3000ideographic",
           "tab\tsep\tvalues", "a\u0301\u0327\u0308", "e\u0301" * 50, "\u0301leading mark",
           "Ǆǅǆ", "ﬀﬁﬂﬃﬄ", "ß ẞ", "İı", "ΣΑΣ", "Ωμέγα", "ℵ₀", "x²+y²=z²", "∑∫√∞≠≤≥",
           "\x00\x00", "a\x00b", "\ufffd", "\ufeffBOM", "zero\u200bwidth", "\u00ad",
           "emoji👨‍👩‍👧 family", "flags 🇯🇵🇰🇷", "https://example.com/a?b=c&d=e#f",
           "user@example.com", "C:\\Windows\\System32", "def f(x): return x**2  # comment",
           "<html><body>Hi</body></html>", "{\"json\": [1, 2, 3]}", "snake_case_name",
           "camelCaseName", "ALLCAPS", "MiXeD CaSe", "3.14", "1,234.56", "-42", "+7",
           "año", "über", "ça", "ñ", "日本語 English 混在", "한국어와 English", "עברית ו-English",
           "   \n   ", "\n ", " \n", "a  b", "a \n b", "a\u00a0\u00a0b", "😀 😀  😀   😀"]
    return out


def test_strings(seed=99, count=3600):
    rng = random.Random(seed)
    strings = fixed_strings()
    while len(strings) < count:
        r = rng.random()
        if r < 0.6:
            strings.append(sentence(rng))
        elif r < 0.7:
            strings.append(sentence(rng, 20, 60))
        elif r < 0.8:  # random valid UTF-8, any plane
            strings.append("".join(assigned_code_point(rng) for _ in range(rng.randint(1, 40))))
        elif r < 0.87:  # whitespace-heavy
            strings.append("".join(rng.choice(WHITESPACE + ["a", "b", "1", "!", "'s"])
                                   for _ in range(rng.randint(1, 20))))
        elif r < 0.94:  # contractions and punctuation glued to words
            strings.append("".join(rng.choice(CONTRACTIONS + PUNCT) + rng.choice(["", " ", word(rng)])
                                   for _ in range(rng.randint(1, 8))))
        else:  # long words
            strings.append("".join(fragment(rng) for _ in range(rng.randint(10, 60))))
    return strings


def invalid_utf8(seed=7, count=300):
    """Byte strings that are not UTF-8: stray continuation bytes, truncated
    sequences, overlongs, surrogates, bytes above F4, mixed with text."""
    rng = random.Random(seed)
    bad = [b"\x80", b"\xbf", b"\xc0\xaf", b"\xc1\xbf", b"\xe0\x80\xaf", b"\xed\xa0\x80",
           b"\xf4\x90\x80\x80", b"\xf5", b"\xff", b"\xfe", b"\xe2\x82", b"\xf0\x9f\x98",
           b"\xc3", b"\xe6\x97", b"\xf0\x9f"]
    out = []
    for _ in range(count):
        parts = []
        for _ in range(rng.randint(1, 6)):
            if rng.random() < 0.5:
                parts.append(rng.choice(bad))
            else:
                parts.append(sentence(rng, 1, 3).encode("utf-8"))
        out.append(b"".join(parts))
    return out
