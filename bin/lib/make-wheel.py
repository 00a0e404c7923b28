"""Writes the wheel of the Python binding (bin/release): a pure-Python wheel (PEP 427) holding the one module,
made with the standard library only, so the release needs no build backend from PyPI.

    python3 bin/lib/make-wheel.py bindings/python/open_apple_models.py VERSION OUT_DIR
"""

import base64
import hashlib
import os
import sys
import zipfile

NAME = "open_apple_models"
SUMMARY = "Python binding of the oam bridge: local LLM agents with real tool calls, over `oam stdio` or the C library"


def digest(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")


def main(module_path: str, version: str, out_dir: str) -> None:
    with open(module_path, "rb") as handle:
        module = handle.read()
    readme = (
        "The Python binding of the oam bridge (`open_apple_models`). It drives the bridge over an `oam stdio` child\n"
        "(`Bridge.over_stdio()`: the `oam` on the PATH, or the command in `OAM_STDIO_COMMAND`) or over the C library\n"
        "in this process (`Bridge()`: the library named by `OAM_LIBRARY`). Both come with the oam release archive.\n"
    )
    dist_info = "%s-%s.dist-info" % (NAME, version)
    files = {
        "open_apple_models.py": module,
        dist_info + "/METADATA": (
            "Metadata-Version: 2.1\n"
            "Name: open-apple-models\n"
            "Version: %s\n"
            "Summary: %s\n"
            "License: Apache-2.0\n"
            "Requires-Python: >=3.9\n"
            "Classifier: License :: OSI Approved :: Apache Software License\n"
            "Classifier: Programming Language :: Python :: 3\n"
            "Description-Content-Type: text/markdown\n"
            "\n%s" % (version, SUMMARY, readme)
        ).encode("utf-8"),
        dist_info + "/WHEEL": (
            "Wheel-Version: 1.0\nGenerator: oam bin/lib/make-wheel.py\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        ).encode("utf-8"),
        dist_info + "/top_level.txt": b"open_apple_models\n",
    }
    record_name = dist_info + "/RECORD"
    record = "".join("%s,%s,%d\n" % (name, digest(data), len(data)) for name, data in files.items())
    record += "%s,,\n" % record_name
    files[record_name] = record.encode("utf-8")
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, "%s-%s-py3-none-any.whl" % (NAME, version))
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(info, data)
    print(target)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    main(*sys.argv[1:])
