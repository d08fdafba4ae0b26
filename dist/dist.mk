# dist/dist.mk - systemd units and packaging (included from Makefile.am).
