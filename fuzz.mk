# SPDX-License-Identifier: GPL-2.0-or-later
# One corpus policy for every libFuzzer target (ring/, sim/, harness/crash/); included by
# their Makefile.am after common-rules.mk.  DESIGN-NOTES.md, "Fuzz seeds
# and corpora", says why.  In the source tree, both committed:
#   fuzz-seeds/   small inputs made by hand or by gen-fuzz-seeds.py, and
#                 fixed crash reproducers; never minimized away;
#   fuzz-corpus/  the minimized regression corpus: written only by
#                 "make fuzz-merge", holding only inputs that add coverage
#                 to the seeds.
# make check replays both (FUZZ_REPLAY_DIRS; each must hold an input).
# "make fuzz" reads both and writes only to fuzz-findings/ in the build
# directory (new inputs in fuzz-findings/corpus/, crash, leak and timeout
# artifacts beside it).  "make fuzz-merge" runs -merge=1 of the seeds,
# the corpus and fuzz-findings/corpus/ into a fresh directory and
# replaces fuzz-corpus/ with what it kept beyond the seeds: commit that.
#
# The including Makefile.am defines FUZZER (the clang-built target, with
# its rule under "if HAVE_CLANG") and may add libFuzzer flags to
# FUZZ_FLAGS.  "make fuzz [FUZZ_SECONDS=N] [FUZZ_RUNS=N]": N seconds or N
# inputs, whichever first (0 seconds / -1 runs: no limit).
FUZZ_SECONDS = 60
FUZZ_RUNS = -1
FUZZ_REPLAY_DIRS = $(abs_srcdir)/fuzz-seeds $(abs_srcdir)/fuzz-corpus
# (FUZZ_SEED_SCRIPT: the including directory's seed generator, if any)
EXTRA_DIST += $(FUZZ_SEED_SCRIPT) fuzz-seeds fuzz-corpus

if HAVE_CLANG
fuzz: $(FUZZER)
	$(MKDIR_P) fuzz-findings/corpus
	./$(FUZZER) -max_total_time=$(FUZZ_SECONDS) -runs=$(FUZZ_RUNS) $(FUZZ_FLAGS) \
		-artifact_prefix=fuzz-findings/ -print_final_stats=1 \
		fuzz-findings/corpus $(srcdir)/fuzz-corpus $(srcdir)/fuzz-seeds

# The seeds are copied into the fresh directory first, so that -merge=1
# keeps only what adds coverage to them; then they are taken out again.
# A merge that keeps nothing beyond the seeds fails and leaves the
# corpus alone (make check wants an input in each directory).
fuzz-merge: $(FUZZER)
	$(MKDIR_P) fuzz-findings/corpus $(srcdir)/fuzz-corpus
	rm -rf fuzz-merge.tmp
	$(MKDIR_P) fuzz-merge.tmp/new
	cp $(srcdir)/fuzz-seeds/* fuzz-merge.tmp/new/
	./$(FUZZER) -merge=1 $(FUZZ_FLAGS) -merge_control_file=fuzz-merge.tmp/control \
		fuzz-merge.tmp/new $(srcdir)/fuzz-corpus fuzz-findings/corpus
	for f in $(srcdir)/fuzz-seeds/*; do \
		rm -f "fuzz-merge.tmp/new/$${f##*/}" || exit 1; \
	done
	@new=`ls fuzz-merge.tmp/new | wc -l`; old=`ls $(srcdir)/fuzz-corpus | wc -l`; \
	found=`ls fuzz-findings/corpus | wc -l`; \
	if test "$$new" -eq 0; then \
		echo "fuzz-merge: nothing beyond the seeds; $(srcdir)/fuzz-corpus left as it was"; \
		exit 1; \
	fi; \
	rm -f $(srcdir)/fuzz-corpus/* && cp fuzz-merge.tmp/new/* $(srcdir)/fuzz-corpus/ || exit 1; \
	rm -rf fuzz-merge.tmp; \
	echo "fuzz-merge: $$old corpus + $$found found inputs -> $$new in $(srcdir)/fuzz-corpus (plus the seeds); commit it"
else
fuzz fuzz-merge:
	@echo "$@: clang not found at configure time; install clang and libclang-rt-14-dev"
	@exit 1
endif

clean-local: clean-fuzz
clean-fuzz:
	rm -rf fuzz-findings fuzz-merge.tmp
CLEANFILES += $(FUZZER)
.PHONY: fuzz fuzz-merge clean-fuzz
