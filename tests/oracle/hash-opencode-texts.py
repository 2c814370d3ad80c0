#!/usr/bin/env python3
"""hash-opencode-texts.py BINARY < MESSAGE > RECORDING - replace every text of opencode's
own (the assets of queries/src/opencode/assets.toml, read from BINARY as record-assets.py
finds them; the Muse prompt with either model name filled in) by the marker
`<<opencode NAME blake3:HASH>>`, so a recording keeps every other byte and none of
opencode's prose. tests/message.rs applies the same replacement to ctxgraph's output."""
import importlib.util
import os
import sys

import blake3

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location('record_assets', os.path.join(here, 'record-assets.py'))
record_assets = importlib.util.module_from_spec(spec)
spec.loader.exec_module(record_assets)

texts = {name: text for name, (text, _) in record_assets.find_assets(open(sys.argv[1], 'rb').read()).items()}
for muse in ['Muse Spark', 'Muse Glimmer']:
    texts[f'model/muse[{muse}]'] = texts['model/muse'].replace('{{MODEL_NAME}}', muse)
message = sys.stdin.buffer.read().decode()
# Longest first: a prompt may contain a shorter text.
for name, text in sorted(texts.items(), key=lambda kv: -len(kv[1])):
    marker = f'<<opencode {name} blake3:{blake3.blake3(text.encode()).hexdigest()}>>'
    message = message.replace(text, marker)
sys.stdout.buffer.write(message.encode())
