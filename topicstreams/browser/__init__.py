"""The browser: which Chromium and how it is launched (:mod:`.chromium`), one per process shared by the engines'
contexts (:mod:`.provider`), and an engine's tab between pages (:mod:`.tabs`)."""
