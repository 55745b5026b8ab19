"""ISO 639 language codes and English names (for prompts and validation)."""

from __future__ import annotations

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

# ISO 639-3 (and 639-2/B) codes of languages that do have a 639-1 code: these must be written
# with the two-letter code. Covers the languages teams most often write in three letters.
THREE_TO_ONE: dict[str, str] = {
    "ara": "ar", "ben": "bn", "deu": "de", "ger": "de", "eng": "en", "spa": "es", "fas": "fa",
    "per": "fa", "fin": "fi", "fra": "fr", "fre": "fr", "hin": "hi", "ind": "id", "jpn": "ja",
    "kor": "ko", "rus": "ru", "swa": "sw", "swh": "sw", "tel": "te", "tha": "th", "yor": "yo",
    "zho": "zh", "chi": "zh", "khm": "km", "por": "pt", "ita": "it", "nld": "nl", "dut": "nl",
    "tur": "tr", "vie": "vi", "pol": "pl", "ukr": "uk", "heb": "he", "ell": "el", "gre": "el",
    "msa": "ms", "may": "ms", "tam": "ta", "urd": "ur", "mar": "mr", "guj": "gu", "kan": "kn",
    "mal": "ml", "pan": "pa", "mya": "my", "bur": "my", "lao": "lo", "amh": "am", "hau": "ha",
    "ibo": "ig", "zul": "zu", "xho": "xh", "som": "so", "ces": "cs", "cze": "cs", "swe": "sv",
    "dan": "da", "nor": "no", "ron": "ro", "rum": "ro", "hun": "hu", "bul": "bg", "srp": "sr",
    "hrv": "hr", "slk": "sk", "slv": "sl", "cat": "ca", "eus": "eu", "baq": "eu", "glg": "gl",
    "tgl": "tl", "jav": "jv", "sun": "su", "nep": "ne", "sin": "si", "kat": "ka", "geo": "ka",
    "hye": "hy", "arm": "hy", "aze": "az", "kaz": "kk", "uzb": "uz", "mon": "mn",
}

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


def check_lang(code: object) -> str | None:
    """Return an error text for an invalid language code, or None when it is valid."""
    if not isinstance(code, str):
        return f"expected an ISO 639-1 code string such as 'hi', found {code!r}"
    if code in ISO639_1:
        return None
    low = code.lower().strip()
    if low != code and (low in ISO639_1 or low in ISO639_3_NAMES):
        return f"language codes are lowercase: found {code!r}, expected {low!r}"
    if low in THREE_TO_ONE:
        return f"found {code!r}; this language has an ISO 639-1 code: use {THREE_TO_ONE[low]!r}"
    if len(code) == 3 and code.isascii() and code.isalpha() and code.islower():
        return None  # ISO 639-3 code of a language without a 639-1 code
    base = code.replace("_", "-").split("-")[0]
    hint = f"; use {base.lower()!r}" if base.lower() in ISO639_1 else ""
    return f"found {code!r}, expected an ISO 639-1 code (or ISO 639-3 where no 639-1 exists){hint}"


def language_name(code: str) -> str:
    """English name of a language code (used in the MIRAGE prompt); falls back to the code."""
    return ISO639_1.get(code) or ISO639_3_NAMES.get(code) or code
