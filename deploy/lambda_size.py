"""What the zips weigh against Lambda's limit, and the package resources the layer need not carry.

A function and its layers may hold at most 250 MB unzipped (AWS Lambda quotas: 262,144,000 bytes), checked by
AWS only when the stack is deployed; `make package` checks it first. The largest pieces: numpy (~72 MB with its
OpenBLAS), the sentence encoder's cache in the function zip (~82 MB: its weights uncompressed, so they are
mapped rather than inflated on a cold start) and the encoder package's own resources in the layer (~33 MB:
weights.npz, sp.model). The function reads the cache, never those resources, once the cache names the layer's
package files (chalicelib/screening/semantic.py checks the hashes in the package's RECORD), so the layer
drops them then; otherwise they stay, as the encoder's fallback. Once dropped, there is no fallback in Lambda: a
cache damaged in the zip (a size the manifest does not name) makes the classifier unavailable, which blocks
unless the policy fails open (then the n-grams alone judge). `make package` builds the cache and checks that it
encodes as the package does before it is shipped.
"""
from __future__ import annotations

import json
import os
import re
import zipfile

LAMBDA_UNZIPPED_LIMIT = 262_144_000  # bytes: the function's code and all its layers, unzipped
_SITE = re.compile(r"^python/lib/python3\.\d+/site-packages/")
ENCODER_MANIFEST = "chalicelib/screening/model/encoder/manifest.json"


def unzipped_size(zip_path: str) -> int:
    """The bytes a zip holds once extracted."""
    with zipfile.ZipFile(zip_path) as archive:
        return sum(info.file_size for info in archive.infolist())


def check_unzipped_size(paths: list[str], limit: int = LAMBDA_UNZIPPED_LIMIT) -> int:
    """The unzipped bytes of a function's zip and its layers' together; refuses above Lambda's limit."""
    total = sum(unzipped_size(path) for path in paths)
    if total > limit:
        sizes = ", ".join(f"{os.path.basename(path)} {unzipped_size(path) / 1e6:.1f} MB" for path in paths)
        raise SystemExit(f"package refused: {total / 1e6:.1f} MB unzipped ({sizes}), over Lambda's {limit / 1e6:.1f} MB")
    return total


def cache_matches_layer(function_zip: str, layer_zip: str) -> bool:
    """Whether the encoder cache in the function zip was made from the package files the layer ships."""
    from chalicelib.screening.semantic import RECORD, made_from, recorded_hashes

    with zipfile.ZipFile(function_zip) as function, zipfile.ZipFile(layer_zip) as layer:
        if ENCODER_MANIFEST not in function.namelist():
            return False
        manifest = json.loads(function.read(ENCODER_MANIFEST))
        records = [name for name in layer.namelist() if _SITE.sub("", name) == RECORD]
        if len(records) != 1:
            return False
        installed = recorded_hashes(layer.read(records[0]).decode("utf-8"))
    return made_from(manifest, installed)


def drop_encoder_resources(out: str) -> list[str]:
    """Rewrite the layer `chalice package` wrote to `out` without the encoder package's resources, when the function
    zip's cache replaces them; return what was dropped (nothing when the cache does not match the layer's package)."""
    from chalicelib.screening.semantic import RESOURCES

    function_zip, layer_zip = os.path.join(out, "deployment.zip"), os.path.join(out, "layer-deployment.zip")
    if not os.path.exists(layer_zip) or not cache_matches_layer(function_zip, layer_zip):
        return []
    partial = layer_zip + ".partial"
    dropped = []
    with zipfile.ZipFile(layer_zip) as source, zipfile.ZipFile(partial, "w") as target:
        for info in source.infolist():
            if _SITE.sub("", info.filename) in RESOURCES:
                dropped.append(info.filename)
                continue
            target.writestr(info, source.read(info), compress_type=info.compress_type)
    os.replace(partial, layer_zip)
    return dropped
