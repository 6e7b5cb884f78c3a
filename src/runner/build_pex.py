"""Packs src/runner/starforge_runner into runner.pex, a Python zipapp, with the same bytes on
every machine: entries sorted, stored (no zlib differences), fixed dates and modes."""

import os
import sys
import zipfile

source, output = sys.argv[1], sys.argv[2]
package = os.path.join(source, "starforge_runner")
names = sorted(n for n in os.listdir(package) if n.endswith(".py"))
tmp = output + ".tmp"
with open(tmp, "wb") as f:
    f.write(b"#!/usr/bin/env python3\n")
    with zipfile.ZipFile(f, "w", zipfile.ZIP_STORED) as z:
        for name in ["__main__.py"] + ["starforge_runner/" + n for n in names]:
            path = os.path.join(package, "__main__.py") if name == "__main__.py" else os.path.join(package, name.split("/", 1)[1])
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            info.create_system = 3
            with open(path, "rb") as src:
                z.writestr(info, src.read())
os.chmod(tmp, 0o755)
os.replace(tmp, output)
