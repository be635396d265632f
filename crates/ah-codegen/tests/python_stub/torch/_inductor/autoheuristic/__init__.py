# Minimal stand-in for the parts of PyTorch that AutoHeuristic artifacts import, so that the
# generated `_NAME.py` can be loaded and run in CI without torch (see the spec, sections 2
# and 5.4). Not PyTorch: only the classes and behaviour the artifacts rely on.
