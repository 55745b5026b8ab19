"""Tiny transformers / FlagEmbedding checkpoints built offline for judge tests and benchmarks.

Every builder trains a small WordPiece tokenizer on a few multilingual sentences and saves a
2-layer model (hidden size 32, ``initializer_range`` 0.2 so that different inputs get different
outputs) with ``save_pretrained``. Classifier heads can be *biased*: with a zero weight matrix the
logits are exactly the bias, whatever the input, which lets a test predict the judge's value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CORPUS = [
    "the cat sat on the mat", "the deck of the bridge is 2460 metres long", "supply ships come nine times a year",
    "el gato se sentó", "der Bodensee ist 251 Meter tief", "Байкал самое глубокое озеро",
    "富士山の標高は3776メートルです", "长江全长约6300公里", "แมวนั่งบนเสื่อ", "ឆ្មាអង្គុយលើកន្ទេល",
    "गंगा नदी लगभग 2525 किलोमीटर लंबी है", "Kilimanjaro una urefu wa mita 5895", "لا يخزن الجمل الماء",
]


def tokenizer(path: Path, *, roberta: bool = False) -> Any:
    """Train and save a small fast tokenizer (BERT-style, or XLM-RoBERTa-style special tokens)."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertTokenizerFast, XLMRobertaTokenizerFast

    specials = ["<pad>", "<unk>", "<s>", "</s>", "<mask>"] if roberta else ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    tok = Tokenizer(models.WordPiece(unk_token=specials[1]))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.train_from_iterator(CORPUS * 3, trainers.WordPieceTrainer(vocab_size=400, special_tokens=specials))
    cls_, sep = (specials[2], specials[3])
    tok.post_processor = processors.TemplateProcessing(
        single=f"{cls_} $A {sep}", pair=f"{cls_} $A {sep} $B:1 {sep}:1",
        special_tokens=[(cls_, tok.token_to_id(cls_)), (sep, tok.token_to_id(sep))])
    if roberta:
        fast = XLMRobertaTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>", unk_token="<unk>",
                                       sep_token="</s>", cls_token="<s>", pad_token="<pad>", mask_token="<mask>",
                                       model_max_length=128)
    else:
        fast = BertTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", cls_token="[CLS]",
                                 sep_token="[SEP]", mask_token="[MASK]", model_max_length=128)
    fast.save_pretrained(path)
    return fast


def _bert_config(vocab_size: int, **kwargs: Any) -> Any:
    from transformers import BertConfig

    return BertConfig(vocab_size=vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                      intermediate_size=37, max_position_embeddings=128, initializer_range=0.2, **kwargs)


def nli_model(path: Path, probs: Sequence[float] | None = (0.7, 0.2, 0.1),
              labels: Sequence[str] = ("entailment", "neutral", "contradiction")) -> Path:
    """A tiny NLI classifier; with ``probs`` its softmax output is exactly ``probs`` for every
    input (zero weights, log-probability bias); with ``None`` it is an untrained random model."""
    import torch
    from transformers import BertForSequenceClassification

    tok = tokenizer(path)
    cfg = _bert_config(tok.vocab_size, num_labels=len(labels), id2label=dict(enumerate(labels)),
                       label2id={name: i for i, name in enumerate(labels)})
    torch.manual_seed(0)
    model = BertForSequenceClassification(cfg)
    if probs is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.copy_(torch.tensor([math.log(p) for p in probs]))
    model.save_pretrained(path)
    return path


def reranker_model(path: Path, score: float | None = 2.5) -> Path:
    """A tiny cross-encoder (one logit); with ``score`` every pair scores exactly ``score``."""
    import torch
    from transformers import BertForSequenceClassification

    tok = tokenizer(path)
    torch.manual_seed(0)
    model = BertForSequenceClassification(_bert_config(tok.vocab_size, num_labels=1))
    if score is not None:
        with torch.no_grad():
            model.classifier.weight.zero_()
            model.classifier.bias.fill_(score)
    model.save_pretrained(path)
    return path


def bge_m3_model(path: Path) -> Path:
    """A tiny XLM-RoBERTa encoder in BGE-M3's layout (with ``colbert_linear.pt`` and
    ``sparse_linear.pt``, so that FlagEmbedding loads the same heads every time)."""
    import torch
    from transformers import XLMRobertaConfig, XLMRobertaModel

    tok = tokenizer(path, roberta=True)
    cfg = XLMRobertaConfig(vocab_size=tok.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                           intermediate_size=37, max_position_embeddings=160, initializer_range=0.2,
                           pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    torch.manual_seed(0)
    XLMRobertaModel(cfg).save_pretrained(path)
    torch.save(torch.nn.Linear(32, 32).state_dict(), path / "colbert_linear.pt")
    torch.save(torch.nn.Linear(32, 1).state_dict(), path / "sparse_linear.pt")
    return path
