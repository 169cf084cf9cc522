# Thin front end: every target runs bench/run.sh, which prints one clear
# error line when something is wrong.
#   make            build, boot, run the demo
#   make check      build what changed, boot, run every test
# See README.md for the rest.

MAKEFLAGS += --no-print-directory
RUN := bench/run.sh

.PHONY: all demo check shell build export-patches reapply bench-selftest csum-fuzz csum-bench configfs-bench clsact-bench clsact-tdc lint-patches series deb stock-check help
all: demo

demo check shell build export-patches reapply csum-fuzz csum-bench configfs-bench clsact-bench clsact-tdc lint-patches series deb stock-check:
	@$(RUN) $@

bench-selftest:
	@$(RUN) selftest

help:
	@sed -n '/^## Commands/,/^## /p' README.md

Makefile README.md: ;

%:
	$(error unknown target '$@' (try: make help))
