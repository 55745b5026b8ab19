"""The package version (a leaf module: reports import it without importing the package)."""

__version__ = "0.2.0"
