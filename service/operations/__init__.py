"""For the person who runs the site: health and the probes (``health``, ``probes``), Prometheus
metrics (``metrics``), Django's system checks (``checks``), the staff's console (``console``) and
systemd units (``units``). Its model: WorkerSeen."""
