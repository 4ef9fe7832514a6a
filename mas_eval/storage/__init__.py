"""Every on-disk layout of the package.

Input paths, atomic outputs and manifests, provenance, the Dataset folder (flat or sharded, with
stored key codes), and the Scores folder.
"""
