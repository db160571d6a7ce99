"""Allow ``python -m sctpsim``, equivalent to the ``sctpsim`` command."""

from sctpsim.cli import main

raise SystemExit(main())
