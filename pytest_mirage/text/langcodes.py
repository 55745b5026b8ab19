"""ISO 639 language codes and English names (for prompts and validation).

A language is written with its ISO 639-1 code (``hi``) when it has one, else with its ISO 639-3 code
(``yue``). The full ISO 639-3 table ships as ``iso639.tsv`` next to this module and is read once, on
the first code that is not a 639-1 code.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

# ISO 639-1 code -> English name.
ISO639_1: dict[str, str] = {
    "aa": "Afar", "ab": "Abkhazian", "ae": "Avestan", "af": "Afrikaans", "ak": "Akan",
    "am": "Amharic", "an": "Aragonese", "ar": "Arabic", "as": "Assamese", "av": "Avaric",
    "ay": "Aymara", "az": "Azerbaijani", "ba": "Bashkir", "be": "Belarusian", "bg": "Bulgarian",
    "bi": "Bislama", "bm": "Bambara", "bn": "Bengali", "bo": "Tibetan", "br": "Breton",
    "bs": "Bosnian", "ca": "Catalan", "ce": "Chechen", "ch": "Chamorro", "co": "Corsican",
    "cr": "Cree", "cs": "Czech", "cu": "Church Slavic", "cv": "Chuvash", "cy": "Welsh",
    "da": "Danish", "de": "German", "dv": "Divehi", "dz": "Dzongkha", "ee": "Ewe",
    "el": "Greek", "en": "English", "eo": "Esperanto", "es": "Spanish", "et": "Estonian",
    "eu": "Basque", "fa": "Persian", "ff": "Fulah", "fi": "Finnish", "fj": "Fijian",
    "fo": "Faroese", "fr": "French", "fy": "Western Frisian", "ga": "Irish", "gd": "Scottish Gaelic",
    "gl": "Galician", "gn": "Guarani", "gu": "Gujarati", "gv": "Manx", "ha": "Hausa",
    "he": "Hebrew", "hi": "Hindi", "ho": "Hiri Motu", "hr": "Croatian", "ht": "Haitian Creole",
    "hu": "Hungarian", "hy": "Armenian", "hz": "Herero", "ia": "Interlingua", "id": "Indonesian",
    "ie": "Interlingue", "ig": "Igbo", "ii": "Sichuan Yi", "ik": "Inupiaq", "io": "Ido",
    "is": "Icelandic", "it": "Italian", "iu": "Inuktitut", "ja": "Japanese", "jv": "Javanese",
    "ka": "Georgian", "kg": "Kongo", "ki": "Kikuyu", "kj": "Kuanyama", "kk": "Kazakh",
    "kl": "Kalaallisut", "km": "Khmer", "kn": "Kannada", "ko": "Korean", "kr": "Kanuri",
    "ks": "Kashmiri", "ku": "Kurdish", "kv": "Komi", "kw": "Cornish", "ky": "Kyrgyz",
    "la": "Latin", "lb": "Luxembourgish", "lg": "Ganda", "li": "Limburgish", "ln": "Lingala",
    "lo": "Lao", "lt": "Lithuanian", "lu": "Luba-Katanga", "lv": "Latvian", "mg": "Malagasy",
    "mh": "Marshallese", "mi": "Maori", "mk": "Macedonian", "ml": "Malayalam", "mn": "Mongolian",
    "mr": "Marathi", "ms": "Malay", "mt": "Maltese", "my": "Burmese", "na": "Nauru",
    "nb": "Norwegian Bokmål", "nd": "North Ndebele", "ne": "Nepali", "ng": "Ndonga", "nl": "Dutch",
    "nn": "Norwegian Nynorsk", "no": "Norwegian", "nr": "South Ndebele", "nv": "Navajo",
    "ny": "Chichewa", "oc": "Occitan", "oj": "Ojibwa", "om": "Oromo", "or": "Odia",
    "os": "Ossetian", "pa": "Punjabi", "pi": "Pali", "pl": "Polish", "ps": "Pashto",
    "pt": "Portuguese", "qu": "Quechua", "rm": "Romansh", "rn": "Rundi", "ro": "Romanian",
    "ru": "Russian", "rw": "Kinyarwanda", "sa": "Sanskrit", "sc": "Sardinian", "sd": "Sindhi",
    "se": "Northern Sami", "sg": "Sango", "si": "Sinhala", "sk": "Slovak", "sl": "Slovenian",
    "sm": "Samoan", "sn": "Shona", "so": "Somali", "sq": "Albanian", "sr": "Serbian",
    "ss": "Swati", "st": "Southern Sotho", "su": "Sundanese", "sv": "Swedish", "sw": "Swahili",
    "ta": "Tamil", "te": "Telugu", "tg": "Tajik", "th": "Thai", "ti": "Tigrinya",
    "tk": "Turkmen", "tl": "Tagalog", "tn": "Tswana", "to": "Tonga", "tr": "Turkish",
    "ts": "Tsonga", "tt": "Tatar", "tw": "Twi", "ty": "Tahitian", "ug": "Uyghur",
    "uk": "Ukrainian", "ur": "Urdu", "uz": "Uzbek", "ve": "Venda", "vi": "Vietnamese",
    "vo": "Volapük", "wa": "Walloon", "wo": "Wolof", "xh": "Xhosa", "yi": "Yiddish",
    "yo": "Yoruba", "za": "Zhuang", "zh": "Chinese", "zu": "Zulu",
}

# Individual languages written where teams mean the macrolanguage that has a 639-1 code.
MACRO_TO_ONE: dict[str, str] = {"swh": "sw", "arb": "ar", "cmn": "zh", "pes": "fa", "zsm": "ms", "ekk": "et",
                                "lvs": "lv", "nob": "nb", "nno": "nn", "khk": "mn", "uzn": "uz", "azj": "az"}

# A few common ISO 639-3 languages without a 639-1 code (names for the prompt).
ISO639_3_NAMES: dict[str, str] = {
    "yue": "Cantonese", "ceb": "Cebuano", "haw": "Hawaiian", "hmn": "Hmong", "fil": "Filipino",
    "ast": "Asturian", "bho": "Bhojpuri", "mai": "Maithili", "kok": "Konkani", "sat": "Santali",
    "shn": "Shan", "pcm": "Nigerian Pidgin", "tpi": "Tok Pisin", "nso": "Northern Sotho",
    "war": "Waray", "ilo": "Iloko", "min": "Minangkabau", "ace": "Acehnese", "ban": "Balinese",
    "bug": "Buginese", "mad": "Madurese", "kab": "Kabyle", "tzm": "Central Atlas Tamazight",
}

MIRAGE_LANGUAGES: tuple[str, ...] = (
    "ar", "bn", "de", "en", "es", "fa", "fi", "fr", "hi", "id",
    "ja", "ko", "ru", "sw", "te", "th", "yo", "zh",
)


SPECIAL_CODES: dict[str, str] = {
    "mis": "uncoded languages", "mul": "multiple languages", "und": "undetermined", "zxx": "no linguistic content",
}


@cache
def _iso639_3() -> dict[str, tuple[str, str]]:
    """ISO 639-3 (and 639-2/B) code -> (its ISO 639-1 code or "", English name)."""
    out: dict[str, tuple[str, str]] = {}
    text = resources.files(__package__).joinpath("iso639.tsv").read_text(encoding="utf-8")
    for line in text.splitlines():
        if line and not line.startswith("#"):
            code, one, name = line.split("\t")
            out[code] = (one, name)
    return out


def is_iso639_3(code: str) -> bool:
    """True for an ISO 639-3 code of a language without an ISO 639-1 code (``yue``, ``ceb``)."""
    entry = _iso639_3().get(code)
    return entry is not None and not entry[0] and code not in MACRO_TO_ONE


def check_lang(code: object) -> str | None:
    """Return an error text for an invalid language code, or None when it is valid.

    Valid: an ISO 639-1 code, or the ISO 639-3 code of a language that has no 639-1 code; lowercase.
    """
    if not isinstance(code, str):
        return f"found {code!r:.40}; expected an ISO 639-1 code string such as 'hi'"
    if code in ISO639_1:
        return None
    if len(code) == 3 and code.isascii() and code.isalpha() and is_iso639_3(code):
        return None
    low = code.lower().strip()
    if low != code and (low in ISO639_1 or (len(low) == 3 and is_iso639_3(low))):
        return f"language codes are lowercase: found {code!r}, expected {low!r}"
    entry = _iso639_3().get(low)
    one = MACRO_TO_ONE.get(low) or (entry[0] if entry else "")
    if one:
        return f"found {code!r}; this language has an ISO 639-1 code: use {one!r}"
    if low in SPECIAL_CODES:
        return (f"found {code!r} ({SPECIAL_CODES[low]}), a special ISO 639 code; expected the code of the "
                "language the text is written in, e.g. 'hi'")
    base = code.replace("_", "-").split("-")[0]
    if base != code and check_lang(base.lower()) is None:
        return f"found {code!r}; region and script subtags are not used: use {base.lower()!r}"
    from ..errors import did_you_mean

    shown = code if len(code) <= 20 else code[:20] + "..."
    hint = did_you_mean(low, ISO639_1) if len(low) == 2 else ""
    return (f"found {shown!r}, which is neither an ISO 639-1 code nor an ISO 639-3 code; expected e.g. 'hi', "
            f"'sw' or 'yue'.{hint}")


def language_name(code: str) -> str:
    """English name of a language code (used in the MIRAGE prompt); falls back to the code."""
    if code in ISO639_1 or code in ISO639_3_NAMES:
        return ISO639_1.get(code) or ISO639_3_NAMES[code]
    entry = _iso639_3().get(code)
    return entry[1] if entry else code
