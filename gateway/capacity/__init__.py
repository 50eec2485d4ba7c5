"""Capacity sizing shared by the report page's capacity section (serving) and `gateway plan`
(offline): the arithmetic, the catalogue, the observed load and per-deployment plans."""
