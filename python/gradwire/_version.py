# The package's version is the library's: meson.build's project version,
# which gw_version_string() reports. pyproject.toml reads it from here
# without importing the package (importing would load the library, which a
# build host need not have); tests/python/test_api.py fails when this, the
# project version and the built library's gw_version_string() disagree.
__version__ = "0.3.0"
