"""The composition root's builders: each builds one part of a running gateway on an
AsyncExitStack and registers that part's close as it goes, so shutdown runs in reverse order
of construction and a start-up that fails half-way closes what it had already opened."""
