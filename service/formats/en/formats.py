"""English dates as the site writes them: ``1 Dec 2026, 14:44 UTC``."""

DATE_FORMAT = "j M Y"
SHORT_DATE_FORMAT = "j M Y"
DATETIME_FORMAT = "j M Y, H:i T"
SHORT_DATETIME_FORMAT = "j M Y, H:i T"
TIME_FORMAT = "H:i"
