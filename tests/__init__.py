"""The project's tests (a regular package: a top-level "tests" package installed by a dependency must not shadow it)."""
