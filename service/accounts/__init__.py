"""Who uses the site: members and their roles, API tokens and one-time sign-in links (``members``),
the sign-in throttle, JupyterHub sign-in (``hub``), the staff's members page and the roster
(``staff_members``, ``views``). Its models: Member, ApiToken, SignInLink, UsedLaunch."""
