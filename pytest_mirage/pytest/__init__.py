"""Everything that touches pytest objects (``plugin.py`` holds only the hook functions and fixtures
that delegate here): collection and items, the session controller, the xdist and JUnit plumbing,
the terminal summary, and the wire format results travel in. ``compat.py`` is the one module that
reads pytest's or another plugin's internals."""
