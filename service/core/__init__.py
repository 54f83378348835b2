"""The site's shared helpers, below every package: who may see a page and the course and gradebook it
serves (``access``), the boundary's errors and ids (``boundary``), the database's outages (``outage``), the
settings that change while the site runs (``live_settings``), how often a student may ask for
something (``limits``), logging (``logs``) and the forms' base."""
