"""The screening sentence encoder's cache as its own Lambda layer, attached only to the functions that screen.

The cache (~82 MB: the encoder's weights uncompressed, so a cold start maps them; chalicelib/screening/semantic.py)
is read by the classifier's second reading and nothing else. In the one deployment.zip Chalice shares across every
function it weighed on those that never screen a prompt (the meter spill, the cost report, the job steps...).
`make package` moves it out of deployment.zip into its own zip, under FOLDER (so /opt/screening-encoder in Lambda),
and the template gives that layer, with semantic.CACHE_ENV naming the folder, to the functions that screen
(deploy/package.py: screening_functions) and to no other.
"""
from __future__ import annotations

import copy
import os
import zipfile
from typing import Any, Iterable

from zips import drop_entries

from chalicelib.screening.semantic import CACHE_ENV, MANIFEST

LAYER = "EncoderLayer"           # its logical id in the template
LAYER_ZIP = "encoder-layer.zip"  # beside deployment.zip and layer-deployment.zip
FOLDER = "screening-encoder"     # in the layer zip; Lambda extracts layers to /opt
LAMBDA_FOLDER = f"/opt/{FOLDER}"
LAYER_MANIFEST = f"{FOLDER}/{MANIFEST}"
IN_FUNCTION_ZIP = "chalicelib/screening/model/encoder/"  # where `chalice package` put the cache (semantic.CACHE_DIR)


def in_layer(name: str) -> str:
    """Where a cache file of the function zip goes in the layer zip."""
    return FOLDER + "/" + name[len(IN_FUNCTION_ZIP):]


def is_cache_file(name: str) -> bool:
    return name.startswith(IN_FUNCTION_ZIP)


def move_cache(out: str) -> list[str]:
    """Move the encoder cache from the function zip `chalice package` wrote to `out` into LAYER_ZIP there, byte for byte;
    return the names moved. Refuses when the function zip holds no cache (package.py builds it before `chalice package`)."""
    function_zip = os.path.join(out, "deployment.zip")
    with zipfile.ZipFile(function_zip) as function, zipfile.ZipFile(os.path.join(out, LAYER_ZIP), "w") as layer:
        cache = [info for info in function.infolist() if is_cache_file(info.filename)]
        if IN_FUNCTION_ZIP + MANIFEST not in {info.filename for info in cache}:
            raise SystemExit(f"package refused: deployment.zip holds no encoder cache ({IN_FUNCTION_ZIP}{MANIFEST})")
        for info in cache:
            moved = copy.copy(info)
            moved.filename = in_layer(info.filename)
            layer.writestr(moved, function.read(info), compress_type=info.compress_type)
    return drop_entries(function_zip, is_cache_file)


def attach(template: dict[str, Any], functions: Iterable[str], layer_name: str) -> dict[str, Any]:
    """The template with the encoder's layer, attached to `functions` (after their other layers), each told where its
    cache is (semantic.CACHE_ENV); every other function as it was."""
    attached = copy.deepcopy(template)
    resources = attached["Resources"]
    functions = list(functions)
    unknown = [name for name in functions if resources.get(name, {}).get("Type") != "AWS::Serverless::Function"]
    if unknown or not functions:
        raise SystemExit(f"package refused: the encoder layer would go to {functions}, of which {unknown} are no function of the template")
    properties = [resources[name]["Properties"] for name in functions]
    resources[LAYER] = {"Type": "AWS::Serverless::LayerVersion", "Properties": {
        "LayerName": layer_name, "Description": "The screening sentence encoder's cache (chalicelib/screening/semantic.py)",
        "ContentUri": f"./{LAYER_ZIP}",
        "CompatibleRuntimes": sorted({props["Runtime"] for props in properties}),
        "CompatibleArchitectures": sorted({arch for props in properties for arch in props.get("Architectures", ["x86_64"])})}}
    for props in properties:
        props["Layers"] = [*props.get("Layers", []), {"Ref": LAYER}]
        environment = props.get("Environment", {})
        props["Environment"] = {**environment, "Variables": {**environment.get("Variables", {}), CACHE_ENV: LAMBDA_FOLDER}}
    return attached
