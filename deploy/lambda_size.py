"""What each function's zips weigh against Lambda's limit, and the package resources the layer need not carry.

A function and its layers may hold at most 250 MB unzipped (AWS Lambda quotas: 262,144,000 bytes), checked by
AWS only when the stack is deployed; `make package` checks it first, for each function with the layers the
template gives it. The largest pieces: numpy (~72 MB with its OpenBLAS), the sentence encoder's cache in its own
layer (~82 MB: its weights uncompressed, so they are mapped rather than inflated on a cold start; only the
functions that screen carry it, deploy/encoder_layer.py) and the encoder package's own resources in the
dependency layer (~33 MB: weights.npz, sp.model). The functions read the cache, never those resources, once the
cache names the dependency layer's package files (chalicelib/screening/semantic.py checks the hashes in the
package's RECORD), so that layer drops them then; otherwise they stay, as the encoder's fallback. Once dropped,
there is no fallback in Lambda: a cache missing or damaged in its layer (a size the manifest does not name) makes
the classifier unavailable, which blocks unless the policy fails open (then the n-grams alone judge). `make
package` builds the cache and checks that it encodes as the package does before it is shipped.
"""
from __future__ import annotations

import json
import os
import re
import zipfile
from typing import Any

from encoder_layer import LAYER_MANIFEST, LAYER_ZIP
from zips import drop_entries

LAMBDA_UNZIPPED_LIMIT = 262_144_000  # bytes: the function's code and all its layers, unzipped
_SITE = re.compile(r"^python/lib/python3\.\d+/site-packages/")
# A library's own test suite, a `tests` package inside it (numpy's ~14 MB, jsonschema's, referencing's): run by its
# maintainers, imported by nothing at run time. A top-level `tests` package is someone's code: it stays.
_TEST_SUITE = re.compile(r"(?:[^/]+/)+tests/")  # matched on the path inside site-packages (_SITE removed)


def unzipped_size(zip_path: str) -> int:
    """The bytes a zip holds once extracted."""
    with zipfile.ZipFile(zip_path) as archive:
        return sum(info.file_size for info in archive.infolist())


def check_unzipped_size(paths: list[str], limit: int = LAMBDA_UNZIPPED_LIMIT, function: str = "the function") -> int:
    """The unzipped bytes of a function's zip and its layers' together; refuses above Lambda's limit."""
    total = sum(unzipped_size(path) for path in paths)
    if total > limit:
        sizes = ", ".join(f"{os.path.basename(path)} {unzipped_size(path) / 1e6:.1f} MB" for path in paths)
        raise SystemExit(f"package refused: {function} holds {total / 1e6:.1f} MB unzipped ({sizes}), over Lambda's {limit / 1e6:.1f} MB")
    return total


def function_artefacts(template: dict[str, Any]) -> dict[str, list[str]]:
    """Each function of the template: its code's zip and its layers' zips, as the template names them (./x.zip).
    Refuses a layer that is no LayerVersion of the template (one it cannot weigh)."""
    resources = template["Resources"]
    artefacts = {}
    for name, resource in resources.items():
        if resource.get("Type") != "AWS::Serverless::Function":
            continue
        props = resource["Properties"]
        layers = []
        for layer in props.get("Layers", []):
            logical = layer.get("Ref") if isinstance(layer, dict) else None
            if resources.get(logical, {}).get("Type") != "AWS::Serverless::LayerVersion":
                raise SystemExit(f"package refused: {name}'s layer {layer} is not in the template, so its size is unknown")
            layers.append(resources[logical]["Properties"]["ContentUri"])
        artefacts[name] = [props["CodeUri"], *layers]
    return artefacts


def check_function_sizes(template: dict[str, Any], out: str, limit: int = LAMBDA_UNZIPPED_LIMIT) -> dict[str, int]:
    """The unzipped bytes of each function of the template with its layers (zips in `out`); refuses one above the limit."""
    return {name: check_unzipped_size([os.path.join(out, os.path.normpath(path)) for path in paths], limit, name)
            for name, paths in function_artefacts(template).items()}


def cache_matches_layer(cache_zip: str, layer_zip: str) -> bool:
    """Whether the encoder cache in its layer zip was made from the package files the dependency layer ships."""
    from chalicelib.screening.semantic import RECORD, made_from, recorded_hashes

    with zipfile.ZipFile(cache_zip) as cache, zipfile.ZipFile(layer_zip) as layer:
        if LAYER_MANIFEST not in cache.namelist():
            return False
        manifest = json.loads(cache.read(LAYER_MANIFEST))
        records = [name for name in layer.namelist() if _SITE.sub("", name) == RECORD]
        if len(records) != 1:
            return False
        installed = recorded_hashes(layer.read(records[0]).decode("utf-8"))
    return made_from(manifest, installed)


def drop_encoder_resources(out: str) -> list[str]:
    """Rewrite the dependency layer `chalice package` wrote to `out` without the encoder package's resources, when the
    encoder layer's cache replaces them; return what was dropped (nothing when the cache does not match the layer's package)."""
    from chalicelib.screening.semantic import RESOURCES

    cache_zip, layer_zip = os.path.join(out, LAYER_ZIP), os.path.join(out, "layer-deployment.zip")
    if not os.path.exists(layer_zip) or not os.path.exists(cache_zip) or not cache_matches_layer(cache_zip, layer_zip):
        return []
    return drop_entries(layer_zip, lambda name: _SITE.sub("", name) in RESOURCES)


def drop_test_suites(out: str) -> list[str]:
    """Rewrite the dependency layer `chalice package` wrote to `out` without its libraries' own test suites (their
    sources and bytecode); return what was dropped. ~16 MB of the 250 MB a function may hold with its layers."""
    layer_zip = os.path.join(out, "layer-deployment.zip")
    if not os.path.exists(layer_zip):
        return []
    return drop_entries(layer_zip, lambda name: _SITE.match(name) is not None and _TEST_SUITE.match(_SITE.sub("", name)) is not None)
