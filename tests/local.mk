# The test build, included by Makefile.am (one non-recursive make): the harness, then the tiers
# as tests/README.md lists them. A program the tests run under the profiler is compiled with
# TEST_PROG_CFLAGS (AM_CFLAGS), so a new one is one line: add it to a check_PROGRAMS list, and a
# _LDADD line only if it needs -lpthread or -ldl (on glibc before 2.34 these are libraries of
# their own). A new script is one word in a check_SCRIPTS list, and one line in tests/README.md.

# ---- tests: unit tests link the modules directly; preload tests run programs with counts
# known by construction under the profiler and check what mf_print reports -----------------------
LOG_DRIVER = env AM_TAP_AWK='$(AWK)' $(SHELL) $(top_srcdir)/build-aux/tap-driver.sh
# (each test under a time limit, MF_TEST_TIMEOUT seconds: one that hangs fails by name)
LOG_COMPILER = $(SHELL) $(top_srcdir)/tests/time_limit.sh
MF_TEST_TIMEOUT = 900
# (the sanitizer options matter only to a --enable-sanitizers build: whole allocation stacks,
# so that tests/fixtures/lsan.supp can name the library function that leaks)
TESTS_ENVIRONMENT = srcdir='$(abs_top_srcdir)' \
	MF_LIB='$(abs_top_builddir)/lib/.libs/libmalloc_freq.so' \
	MF_PRINT='$(abs_top_builddir)/mf_print/mf_print' MF_TESTS='$(abs_top_builddir)/tests/progs' \
	CC='$(CC)' CXX='$(CXX)' MF_TEST_TIMEOUT='$(MF_TEST_TIMEOUT)' ASAN_OPTIONS=fast_unwind_on_malloc=0 \
	LSAN_OPTIONS='suppressions=$(abs_top_srcdir)/tests/fixtures/lsan.supp:print_suppressions=0'; \
	export srcdir MF_LIB MF_PRINT MF_TESTS CC CXX MF_TEST_TIMEOUT ASAN_OPTIONS LSAN_OPTIONS;
TEST_PROG_CFLAGS = -O1 -g -fno-omit-frame-pointer -fno-builtin -pthread
AM_CFLAGS = $(TEST_PROG_CFLAGS)
EXTRA_DIST += tests/fixtures/lsan.supp tests/tap.sh tests/time_limit.sh tests/progs/dhat_compare.py \
	tests/progs/unpack_pack.py \
	tests/progs/symbolize_target.c tests/progs/prog_rust.rs tests/progs/prog_python.py \
	tests/progs/prog_rust_inline.rs tests/progs/prog_cxx_scopes.cpp

# lib/'s modules of files and processes, as plain code (not the preloaded library's build), for
# the unit tests that call them: test_format and test_files
check_LIBRARIES += tests/unit/libmf_files.a
tests_unit_libmf_files_a_SOURCES = lib/profile_file.c lib/fds_apart.c lib/process.c \
	lib/process_end.c lib/modules.c lib/objects.c lib/loader.c lib/namespaces.c lib/config.c \
	lib/parse.c lib/parse.h lib/log.c lib/write_all.c lib/format.c
tests_unit_libmf_files_a_CFLAGS = $(MF_CFLAGS) -I$(top_srcdir)/lib $(SANITIZE_CFLAGS)

# unit: the on-disk format round trip, writer (lib/) to reader (mf_print/)
check_PROGRAMS += tests/unit/test_format
tests_unit_test_format_SOURCES = tests/unit/test_format.c tests/tap.h lib/trie.c lib/timeline.c \
	mf_print/reader.c mf_print/pack.c
tests_unit_test_format_LDADD = tests/unit/libmf_files.a -ldl -lpthread
tests_unit_test_format_CFLAGS = $(MF_CFLAGS) -I$(top_srcdir)/lib $(SANITIZE_CFLAGS)
tests_unit_test_format_LDFLAGS = $(SANITIZE_CFLAGS)
TESTS += tests/unit/test_format

# unit: the hot stacks and the words that decide a walk, on stacks built by hand (each frame's
# return address at its CFA - 8, as on x86-64 and in an AArch64 frame record)
check_PROGRAMS += tests/unit/test_hot
tests_unit_test_hot_SOURCES = tests/unit/test_hot.c tests/tap.h lib/unwind/walk.c \
	lib/unwind/hot.c lib/unwind/rule_table.c
tests_unit_test_hot_CFLAGS = $(MF_CFLAGS) -I$(top_srcdir)/lib $(SANITIZE_CFLAGS)
tests_unit_test_hot_LDFLAGS = $(SANITIZE_CFLAGS)
tests_unit_test_hot_LDADD = -lpthread
TESTS += tests/unit/test_hot

# unit: offline symbolization against a program compiled at test time
check_PROGRAMS += tests/unit/test_symbolize
tests_unit_test_symbolize_SOURCES = tests/unit/test_symbolize.c
tests_unit_test_symbolize_CFLAGS = $(MF_CFLAGS) -I$(top_srcdir)/mf_print $(LIBDW_CFLAGS) $(SANITIZE_CFLAGS)
tests_unit_test_symbolize_LDFLAGS = $(SANITIZE_CFLAGS)
tests_unit_test_symbolize_LDADD = $(MF_PRINT_LIBS)
TESTS += tests/unit/test_symbolize

# unit: the model, on profiles built by hand, and every report from one model
check_PROGRAMS += tests/unit/test_model
tests_unit_test_model_SOURCES = tests/unit/test_model.c tests/tap.h
tests_unit_test_model_CFLAGS = $(MF_CFLAGS) $(LIBDW_CFLAGS) $(SANITIZE_CFLAGS)
tests_unit_test_model_LDFLAGS = $(SANITIZE_CFLAGS)
tests_unit_test_model_LDADD = $(MF_PRINT_LIBS)
TESTS += tests/unit/test_model

# what the symbolizer says of a program's addresses, for tests that compare it with addr2line
check_PROGRAMS += tests/progs/sym_frames
tests_progs_sym_frames_SOURCES = tests/progs/sym_frames.c
tests_progs_sym_frames_CFLAGS = $(MF_CFLAGS) $(LIBDW_CFLAGS) $(SANITIZE_CFLAGS)
tests_progs_sym_frames_LDFLAGS = $(SANITIZE_CFLAGS)
tests_progs_sym_frames_LDADD = $(MF_PRINT_LIBS)

# programs run under the profiler
check_PROGRAMS += tests/progs/prog_sites tests/progs/prog_kill tests/progs/prog_fork \
	tests/progs/prog_exec tests/progs/prog_errno tests/progs/prog_dlopen \
	tests/progs/prog_dlbind tests/progs/prog_mapfail tests/progs/prog_exit_threads \
	tests/progs/prog_exit_grow tests/progs/prog_sample tests/progs/prog_allocator \
	tests/progs/prog_signal tests/progs/prog_daemon tests/progs/prog_threads tests/progs/prog_pack \
	tests/progs/prog_cxx tests/progs/prog_spawn tests/progs/run_status tests/progs/prog_deep \
	tests/progs/prog_hazard tests/progs/prog_reuse tests/progs/prog_sighost \
	tests/progs/prog_rules tests/progs/prog_jit tests/progs/prog_tree tests/progs/prog_life \
	tests/progs/prog_outputs tests/progs/prog_life_sample tests/progs/prog_peak \
	tests/progs/prog_life_fork tests/progs/prog_life_handoff tests/progs/prog_life_layout \
	tests/progs/prog_life_arena tests/progs/prog_life_sigfork tests/progs/prog_life_realloc \
	tests/progs/prog_life_sigfree tests/progs/prog_life_max tests/progs/prog_life_seccomp \
	tests/progs/prog_aslimit \
	tests/progs/prog_fifo tests/progs/prog_samename tests/progs/prog_timeline \
	tests/progs/prog_entries \
	tests/progs/prog_attach tests/progs/prog_attach_api tests/progs/prog_allocator_gap
tests_progs_prog_attach_LDADD = -lpthread -ldl
# prog_attach linked with the API's stub library (its own malloc_freq_dir)
tests_progs_prog_attach_api_SOURCES = tests/progs/prog_attach.c
tests_progs_prog_attach_api_CPPFLAGS = $(AM_CPPFLAGS) -DPROG_ATTACH_API
tests_progs_prog_attach_api_LDFLAGS = -no-install
tests_progs_prog_attach_api_LDADD = lib/libmalloc_freq_api.la -lpthread -ldl
tests_progs_run_status_CFLAGS = $(MF_CFLAGS) # (runs a program, is not run under the profiler)
tests_progs_prog_timeline_LDADD = -ldl
tests_progs_prog_samename_SOURCES = tests/progs/prog_samename.c tests/progs/prog_samename_calloc.c
tests_progs_prog_peak_LDADD = -ldl
tests_progs_prog_life_fork_LDADD = -lpthread
tests_progs_prog_life_handoff_LDADD = -lpthread
tests_progs_prog_life_layout_LDADD = -lpthread
tests_progs_prog_life_arena_LDADD = -lpthread
tests_progs_prog_life_max_LDADD = -lpthread
tests_progs_prog_life_realloc_LDADD = -lpthread
tests_progs_prog_life_seccomp_LDADD = -lpthread
tests_progs_prog_aslimit_LDADD = -lpthread
tests_progs_prog_fifo_LDADD = -lpthread
tests_progs_prog_outputs_LDADD = -lpthread
tests_progs_prog_life_LDADD = -lpthread
tests_progs_prog_life_sample_LDADD = -lpthread
tests_progs_prog_reuse_LDADD = tests/progs/libreuse_nofp.a
# (two of prog_reuse's frames without a frame pointer, whichever the compiler)
check_LIBRARIES += tests/progs/libreuse_nofp.a
tests_progs_libreuse_nofp_a_SOURCES = tests/progs/prog_reuse_nofp.c
tests_progs_libreuse_nofp_a_CFLAGS = $(TEST_PROG_CFLAGS) -fomit-frame-pointer
tests_progs_prog_rules_LDADD = -ldl
tests_progs_prog_sighost_CFLAGS = $(TEST_PROG_CFLAGS) $(LIBUNWIND_CFLAGS)
tests_progs_prog_sighost_LDADD = $(LIBUNWIND_LIBS) -ldl
tests_progs_prog_exit_threads_LDADD = -lpthread
tests_progs_prog_exit_grow_LDADD = -lpthread
tests_progs_prog_sample_LDADD = -lpthread
tests_progs_prog_allocator_LDADD = -ldl -lpthread
# prog_allocator with its segments aligned to 64 KiB pages (arm64's linkers' default): on a system
# of 4 KiB pages there are gaps between them, and the loader knows each segment apart
tests_progs_prog_allocator_gap_SOURCES = tests/progs/prog_allocator.c
tests_progs_prog_allocator_gap_LDFLAGS = -Wl,-z,max-page-size=0x10000
tests_progs_prog_allocator_gap_LDADD = -ldl -lpthread
tests_progs_prog_daemon_LDADD = -lpthread
tests_progs_prog_threads_LDADD = -lpthread
tests_progs_prog_pack_LDADD = -lpthread
tests_progs_prog_spawn_LDADD = -lpthread
tests_progs_prog_hazard_LDADD = -ldl -lpthread
tests_progs_prog_cxx_SOURCES = tests/progs/prog_cxx.cpp
tests_progs_prog_cxx_CXXFLAGS = -O1 -g -fno-omit-frame-pointer
tests_progs_prog_sites_LDADD = -lpthread
tests_progs_prog_fork_LDADD = -lpthread
tests_progs_prog_dlopen_LDADD = -ldl
tests_progs_prog_dlbind_LDADD = -ldl
tests_progs_prog_mapfail_LDADD = -ldl
check_LTLIBRARIES = tests/progs/plugin.la tests/progs/failmap.la \
	tests/progs/libmalloc_freq_fault.la tests/progs/libmalloc_freq_slowexit.la
# the library with a fault: now and then a hot stack gives a wrong leaf (check mode must say)
tests_progs_libmalloc_freq_fault_la_SOURCES = $(lib_libmalloc_freq_la_SOURCES)
tests_progs_libmalloc_freq_fault_la_CPPFLAGS = $(lib_libmalloc_freq_la_CPPFLAGS) -DMF_FAULT_HOT
tests_progs_libmalloc_freq_fault_la_CFLAGS = $(lib_libmalloc_freq_la_CFLAGS)
tests_progs_libmalloc_freq_fault_la_LDFLAGS = $(lib_libmalloc_freq_la_LDFLAGS) -rpath /nowhere
tests_progs_libmalloc_freq_fault_la_LIBADD = $(lib_libmalloc_freq_la_LIBADD)
EXTRA_tests_progs_libmalloc_freq_fault_la_DEPENDENCIES = lib/libmalloc_freq.map
# the library with a pause: an ending thread waits 50 ms once it has left the threads' list
tests_progs_libmalloc_freq_slowexit_la_SOURCES = $(lib_libmalloc_freq_la_SOURCES)
tests_progs_libmalloc_freq_slowexit_la_CPPFLAGS = $(lib_libmalloc_freq_la_CPPFLAGS) -DMF_FAULT_EXIT_SLOW
tests_progs_libmalloc_freq_slowexit_la_CFLAGS = $(lib_libmalloc_freq_la_CFLAGS)
tests_progs_libmalloc_freq_slowexit_la_LDFLAGS = $(lib_libmalloc_freq_la_LDFLAGS) -rpath /nowhere
tests_progs_libmalloc_freq_slowexit_la_LIBADD = $(lib_libmalloc_freq_la_LIBADD)
EXTRA_tests_progs_libmalloc_freq_slowexit_la_DEPENDENCIES = lib/libmalloc_freq.map
tests_progs_plugin_la_SOURCES = tests/progs/plugin.c
tests_progs_plugin_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
check_LTLIBRARIES += tests/progs/ctoralloc.la
tests_progs_ctoralloc_la_SOURCES = tests/progs/ctoralloc.c
tests_progs_ctoralloc_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
check_LTLIBRARIES += tests/progs/ctorsnap.la
tests_progs_ctorsnap_la_SOURCES = tests/progs/ctorsnap.c
tests_progs_ctorsnap_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_progs_failmap_la_SOURCES = tests/progs/failmap.c
tests_progs_failmap_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
tests_progs_failmap_la_LIBADD = -ldl
check_LTLIBRARIES += tests/progs/failpack.la
tests_progs_failpack_la_SOURCES = tests/progs/failpack.c
tests_progs_failpack_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere

check_SCRIPTS += tests/preload/t_counts.sh tests/preload/t_kill.sh tests/preload/t_fork.sh \
	tests/preload/t_exec.sh tests/preload/t_dlopen.sh tests/preload/t_dlbind.sh \
	tests/preload/t_transparent.sh tests/preload/t_mf_print.sh tests/preload/t_flamegraph.sh \
	tests/preload/t_exit_threads.sh tests/preload/t_sample.sh tests/preload/t_allocators.sh \
	tests/preload/t_exports.sh tests/preload/t_signal.sh tests/preload/t_daemon.sh \
	tests/preload/t_threads.sh tests/preload/t_pack.sh tests/preload/t_cxx.sh tests/preload/t_processes.sh \
	tests/preload/t_fatal.sh tests/preload/t_settings.sh tests/preload/t_languages.sh \
	tests/preload/t_hazards.sh tests/preload/t_unwind.sh tests/preload/t_rules.sh \
	tests/preload/t_rust_inline.sh tests/preload/t_clang.sh tests/preload/t_process_tree.sh \
	tests/preload/t_life.sh tests/preload/t_life_sample.sh tests/preload/t_life_peak.sh \
	tests/preload/t_life_handoff.sh tests/preload/t_life_arena.sh \
	tests/preload/t_life_layout.sh tests/preload/t_life_sigfork.sh \
	tests/preload/t_life_realloc.sh tests/preload/t_life_sigfree.sh tests/preload/t_life_seccomp.sh \
	tests/preload/t_live_modules.sh tests/preload/t_dhat.sh tests/preload/t_dhat_real.sh \
	tests/preload/t_life_report.sh tests/preload/t_life_max.sh tests/preload/t_timeline.sh \
	tests/preload/t_timeline_entries.sh \
	tests/preload/t_pprof.sh tests/preload/t_speedscope.sh tests/preload/t_json.sh \
	tests/preload/t_dot.sh tests/preload/t_diff.sh tests/preload/t_metrics.sh \
	tests/preload/t_sym_nodebug.sh tests/preload/t_split_dwarf.sh tests/preload/t_dlreuse.sh \
	tests/preload/t_unwind_remap.sh tests/preload/t_report_words.sh \
	tests/preload/t_find_object.sh tests/preload/t_ctor_alloc.sh tests/preload/t_codegen.sh \
	tests/preload/t_cross_arch.sh
EXTRA_DIST += $(check_SCRIPTS)
# t_codegen.sh builds these itself, with each compiler and flag set
EXTRA_DIST += tests/progs/codegen.c tests/progs/codegen_cgo.go
# t_cross_arch.sh builds this itself, for each processor
EXTRA_DIST += tests/progs/prog_cross.c
# t_dlreuse.sh builds these itself (an assembler's frames, with $(CC))
EXTRA_DIST += tests/progs/prog_dlreuse.c tests/progs/dlreuse_rsp.S tests/progs/dlreuse_rbp.S
# t_unwind_remap.sh likewise
EXTRA_DIST += tests/progs/prog_remap.c tests/progs/nocfi_tramp.S
# t_speedscope.sh: its screenshot, and speedscope from npm, kept across `make clean`
CLEANFILES += tests/progs/t_speedscope.png
distclean-local:
	rm -rf tests/progs/.speedscope
TESTS += $(check_SCRIPTS)

# hostile hosts: programs that confine, starve or abuse the process the profiler runs in, each
# checked against its plain run (tests/progs/prog.h: their shared call sites)
HOSTILE_PROGS = tests/progs/prog_cancel tests/progs/prog_stacks tests/progs/prog_fsize \
	tests/progs/prog_seccomp tests/progs/prog_leader tests/progs/prog_rawfork \
	tests/progs/prog_identity tests/progs/prog_longjmp tests/progs/prog_fds \
	tests/progs/prog_mappings tests/progs/prog_dirswap tests/progs/prog_report \
	tests/progs/prog_stderr tests/progs/prog_nproc tests/progs/prog_ownalloc \
	tests/progs/prog_copies tests/progs/prog_callback tests/progs/prog_callback_cxx \
	tests/progs/prog_addr_alloc
check_PROGRAMS += $(HOSTILE_PROGS)
tests_progs_prog_addr_alloc_CFLAGS = $(AM_CFLAGS) -fno-pie # (canonical PLT entries: below)
tests_progs_prog_addr_alloc_LDFLAGS = -no-pie
tests_progs_prog_cancel_LDADD = -lpthread
tests_progs_prog_stacks_LDFLAGS = -Wl,-z,now # (its own lazy binding would run on the small stacks)
tests_progs_prog_stacks_LDADD = -lpthread
tests_progs_prog_fsize_LDADD = -lpthread
tests_progs_prog_seccomp_LDADD = -lpthread -ldl
tests_progs_prog_leader_LDADD = -lpthread
tests_progs_prog_identity_LDADD = -lpthread
tests_progs_prog_fds_LDADD = -lpthread
tests_progs_prog_nproc_LDADD = -lpthread
tests_progs_prog_mappings_LDADD = -lpthread
tests_progs_prog_dirswap_LDADD = -ldl -lpthread
tests_progs_prog_report_LDADD = -ldl -lpthread
tests_progs_prog_ownalloc_LDADD = -lpthread
tests_progs_prog_copies_LDADD = -ldl
tests_progs_prog_callback_LDADD = -ldl
tests_progs_prog_callback_cxx_SOURCES = tests/progs/prog_callback_cxx.cpp
tests_progs_prog_callback_cxx_CXXFLAGS = -O1 -g
tests_progs_prog_callback_cxx_LDADD = -lpthread
# an allocator a thread may leave at any instruction (cancelled, or by siglongjmp)
check_LTLIBRARIES += tests/progs/bumpalloc.la
tests_progs_bumpalloc_la_SOURCES = tests/progs/bumpalloc.c
tests_progs_bumpalloc_la_LDFLAGS = -module -avoid-version -shared -rpath /nowhere
HOSTILE_TESTS = tests/hostile/t_cancel.sh tests/hostile/t_stacks.sh tests/hostile/t_fsize.sh \
	tests/hostile/t_seccomp.sh tests/hostile/t_leader.sh tests/hostile/t_rawfork.sh \
	tests/hostile/t_identity.sh tests/hostile/t_longjmp.sh tests/hostile/t_descriptors.sh \
	tests/hostile/t_mappings.sh tests/hostile/t_dirswap.sh tests/hostile/t_report_text.sh \
	tests/hostile/t_ownalloc.sh tests/hostile/t_copies.sh tests/hostile/t_callback.sh \
	tests/hostile/t_page_size.sh tests/hostile/t_no_proc.sh
check_SCRIPTS += $(HOSTILE_TESTS) # (in TESTS and EXTRA_DIST with the others, above)
EXTRA_DIST += tests/progs/prog.h tests/progs/prog_glibc.h tests/progs/prog_handoff.h tests/hostile/hostile_long.sh \
	tests/control/interval_long.sh
# the longer tiers (CI runs them): a TAP script run with make check's environment
MF_LONG_RUN = srcdir='$(abs_top_srcdir)' MF_LIB='$(abs_top_builddir)/lib/.libs/libmalloc_freq.so' \
	MF_PRINT='$(abs_top_builddir)/mf_print/mf_print' MF_TESTS='$(abs_top_builddir)/tests/progs' \
	$(SHELL) $(top_srcdir)/tests
# the longer tier: the same hosts at full size (15000 threads) and the chancy ones many times
check-hostile: lib/libmalloc_freq.la mf_print/mf_print $(HOSTILE_PROGS) tests/progs/bumpalloc.la
	@$(MF_LONG_RUN)/hostile/hostile_long.sh
.PHONY: check-hostile
# a long-running program's interval snapshots, over a minute
check-long: lib/libmalloc_freq.la mf_print/mf_print tests/progs/prog_snapshot
	@$(MF_LONG_RUN)/control/interval_long.sh
.PHONY: check-long
# the preload tests again with the loaded objects found by the profiler's own table, as on a
# glibc without _dl_find_object (before 2.35); their summary in test-suite-fallback.log
check-fallback:
	@MALLOC_FREQ_FIND_OBJECT=table $(MAKE) $(AM_MAKEFLAGS) check \
		TEST_SUITE_LOG=test-suite-fallback.log \
		TESTS="`cd $(srcdir) && grep -l 'profile\|MF_LIB' $(check_SCRIPTS)`"
.PHONY: check-fallback
CLEANFILES += test-suite-fallback.log

# runtime control: the public API (include/malloc_freq.h) and MALLOC_FREQ_START
CONTROL_PROGS = tests/progs/prog_control tests/progs/prog_api tests/progs/prog_api_static \
	tests/progs/prog_api_count tests/progs/prog_snapshot tests/progs/prog_tags \
	tests/progs/prog_weight tests/progs/prog_weight_cost
check_PROGRAMS += $(CONTROL_PROGS)
tests_progs_prog_control_LDADD = -lpthread
tests_progs_prog_snapshot_LDADD = -lpthread
tests_progs_prog_weight_cost_LDADD = -lpthread
tests_progs_prog_tags_LDFLAGS = -no-install
tests_progs_prog_tags_LDADD = lib/libmalloc_freq_api.la -lpthread
# one program linked with the stub library, shared (-no-install: the binary itself, no
# libtool wrapper script, which the preload would profile too) and static
tests_progs_prog_api_SOURCES = tests/progs/prog_api.c
tests_progs_prog_api_LDFLAGS = -no-install
tests_progs_prog_api_LDADD = lib/libmalloc_freq_api.la
tests_progs_prog_api_static_SOURCES = tests/progs/prog_api.c
tests_progs_prog_api_static_LDADD = lib/libmalloc_freq_api.a -ldl
tests_progs_prog_api_count_SOURCES = tests/progs/prog_api_count.c
tests_progs_prog_api_count_LDADD = lib/libmalloc_freq_api.a -ldl
CONTROL_TESTS = tests/control/t_control.sh tests/control/t_api_stub.sh tests/control/t_snapshot.sh \
	tests/control/t_signals.sh tests/control/t_tags.sh tests/control/t_weight.sh \
	tests/control/t_weight_cost.sh tests/control/t_snapshot_exact.sh \
	tests/control/t_fork_control.sh tests/control/t_snapshot_dir.sh \
	tests/control/t_snapshot_delta.sh
check_SCRIPTS += $(CONTROL_TESTS) # (in TESTS and EXTRA_DIST with the others, above)

# ---- tests of the launcher and the documents --------------------------------------------------
# exit statuses, signals, a wrapper script, a process tree, usage errors (needs tests/progs/prog_tree)
check_SCRIPTS += tests/preload/t_launcher.sh
# --attach and --detach: a running program's calls counted from attach to detach, refusals
# (needs tests/progs/prog_attach, gdb and the right to trace)
check_SCRIPTS += tests/preload/t_attach.sh
# the profile's modes; directories other users could replace it in, refused
check_SCRIPTS += tests/preload/t_owner.sh
# the Rust and Python demos under the launcher, their counts as docs/demos.md tells them
check_SCRIPTS += tests/preload/t_demos.sh
# --help and the man pages, the settings lib/ reads and malloc_freq.7, the documents' links
check_SCRIPTS += tests/preload/t_docs.sh
EXTRA_DIST += tests/README.md # (the tests' index, which t_docs.sh holds to the tree)

# ---- tests of mf_print's --html ---------------------------------------------------------------
# read in headless Chromium (tests/progs/html_check.js), its screenshot kept as tests/progs/t_html.png
check_SCRIPTS += tests/preload/t_html.sh tests/preload/t_html_window.sh
EXTRA_DIST += tests/progs/html_check.js docs/html_report.png
CLEANFILES += tests/progs/t_html.png tests/progs/t_timeline.png tests/progs/t_html_window.png
# the chart's call rates over a run of a busy thread, short threads and a burst
check_SCRIPTS += tests/preload/t_html_rates.sh
check_PROGRAMS += tests/progs/prog_burst
tests_progs_prog_burst_LDADD = -lpthread -ldl
CLEANFILES += tests/progs/t_html_rates.png

# unit: simplified C++ names
check_PROGRAMS += tests/unit/test_names
tests_unit_test_names_SOURCES = tests/unit/test_names.c
tests_unit_test_names_CFLAGS = $(MF_CFLAGS) $(SANITIZE_CFLAGS)
tests_unit_test_names_LDFLAGS = $(SANITIZE_CFLAGS)
tests_unit_test_names_LDADD = $(MF_PRINT_LIBS)
TESTS += tests/unit/test_names

# ---- benchmark: `make bench` (never part of make check: timings are not tests) ----------------
EXTRA_PROGRAMS += tests/bench/bench_alloc tests/bench/bench_run tests/bench/bench_shapes \
	tests/bench/bench_shapes_fp tests/bench/bench_churn
tests_bench_bench_alloc_SOURCES = tests/bench/bench_alloc.c
tests_bench_bench_alloc_CFLAGS = -O2 -g -pthread
tests_bench_bench_alloc_LDADD = -lpthread
# lifetimes' churn: blocks made and freed by chains, calloc, realloc and strdup
tests_bench_bench_churn_SOURCES = tests/bench/bench_churn.c
tests_bench_bench_churn_CFLAGS = -O2 -g -pthread
tests_bench_bench_churn_LDADD = -lpthread
# the stack shapes of real code, built as real code is: -O2 -g, and with frame pointers
tests_bench_bench_shapes_SOURCES = tests/bench/bench_shapes.c
tests_bench_bench_shapes_CFLAGS = -O2 -g -pthread
tests_bench_bench_shapes_LDADD = -lpthread
tests_bench_bench_shapes_fp_SOURCES = tests/bench/bench_shapes.c
tests_bench_bench_shapes_fp_CFLAGS = -O2 -g -fno-omit-frame-pointer -pthread
tests_bench_bench_shapes_fp_LDADD = -lpthread
tests_bench_bench_run_SOURCES = tests/bench/bench_run.c
tests_bench_bench_run_CFLAGS = $(MF_CFLAGS)
# the floor: a preload that only forwards each call (built as any preloaded library is)
tests/bench/bench_floor.so: tests/bench/bench_floor.c
	$(AM_V_CC)$(CC) -O2 -fPIC -shared -ftls-model=initial-exec -o $@ \
		$(top_srcdir)/tests/bench/bench_floor.c
CLEANFILES += tests/bench/bench_floor.so
EXTRA_DIST += tests/bench/bench.sh tests/bench/bench_floor.c
bench: lib/libmalloc_freq.la mf_print/mf_print tests/bench/bench_alloc tests/bench/bench_run \
		tests/bench/bench_shapes tests/bench/bench_shapes_fp tests/bench/bench_churn \
		tests/bench/bench_floor.so
	@MF_LIB='$(abs_top_builddir)/lib/.libs/libmalloc_freq.so' MF_BUILD='$(abs_top_builddir)' \
		MF_SRC='$(abs_top_srcdir)' MF_FLOOR='$(abs_top_builddir)/tests/bench/bench_floor.so' \
		$(SHELL) $(top_srcdir)/tests/bench/bench.sh
.PHONY: bench
# mf_print's section: how long its reports of real programs' and synthetic profiles take
EXTRA_PROGRAMS += tests/bench/bench_print_prog
tests_bench_bench_print_prog_SOURCES = tests/bench/bench_print_prog.c
tests_bench_bench_print_prog_CFLAGS = -O2 -g -pthread
tests_bench_bench_print_prog_LDADD = -lpthread
EXTRA_DIST += tests/bench/bench_print.sh
bench: bench-print
bench-print: lib/libmalloc_freq.la mf_print/mf_print tests/bench/bench_run \
		tests/bench/bench_print_prog
	@MF_LIB='$(abs_top_builddir)/lib/.libs/libmalloc_freq.so' MF_BUILD='$(abs_top_builddir)' \
		MF_SRC='$(abs_top_srcdir)' $(SHELL) $(top_srcdir)/tests/bench/bench_print.sh
.PHONY: bench-print
EXTRA_PROGRAMS += tests/bench/bench_server
tests_bench_bench_server_SOURCES = tests/bench/bench_server.c
tests_bench_bench_server_CFLAGS = -O2 -g -pthread
tests_bench_bench_server_LDADD = -lpthread
EXTRA_DIST += tests/bench/server_run.sh
# `make bench-server MINUTES=5`: a server attached to for minutes, its counts checked exactly
bench-server: lib/libmalloc_freq.la mf_print/mf_print launcher/malloc_freq tests/bench/bench_server
	MF_BUILD='$(abs_top_builddir)' $(SHELL) $(top_srcdir)/tests/bench/server_run.sh
.PHONY: bench-server

# robustness: truncations and 5000 random changes of real files (tests/fixtures/fuzz_corpus)
check_PROGRAMS += tests/unit/test_reader_robust
tests_unit_test_reader_robust_SOURCES = tests/unit/test_reader_robust.c tests/unit/reader_exercise.h
tests_unit_test_reader_robust_CFLAGS = $(MF_CFLAGS) $(LIBDW_CFLAGS) $(SANITIZE_CFLAGS)
tests_unit_test_reader_robust_LDFLAGS = $(SANITIZE_CFLAGS)
tests_unit_test_reader_robust_LDADD = $(MF_PRINT_LIBS)
TESTS += tests/unit/test_reader_robust
EXTRA_DIST += tests/fixtures/fuzz_corpus tests/unit/fuzz_reader.c

# fuzzing: `make fuzz [FUZZ_SECONDS=60]` runs libFuzzer on the reader, seeded with the corpus
FUZZ_SECONDS = 60
FUZZ_CC = clang
fuzz: tests/unit/fuzz_reader.c $(MF_PRINT_CORE)
	@mkdir -p fuzz-work/corpus fuzz-work/findings
	$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
		-I$(top_builddir) -I$(top_srcdir)/include $(LIBDW_CFLAGS) \
		$(top_srcdir)/tests/unit/fuzz_reader.c $(filter %.c,$(addprefix $(top_srcdir)/,$(MF_PRINT_CORE))) \
		$(LIBDW_LIBS) -lelf $(LIBIBERTY_LIBS) $(ZLIB_LIBS) -lm -o fuzz-work/fuzz_reader
	cd fuzz-work && ./fuzz_reader -max_total_time=$(FUZZ_SECONDS) -max_len=65536 \
		-rss_limit_mb=2048 -timeout=10 -artifact_prefix=findings/ corpus $(abs_top_srcdir)/tests/fixtures/fuzz_corpus
.PHONY: fuzz
clean-local-fuzz:
	rm -rf fuzz-work

# unit: planted symlinks, taken names, permissions
check_PROGRAMS += tests/unit/test_files
tests_unit_test_files_SOURCES = tests/unit/test_files.c tests/tap.h
tests_unit_test_files_CFLAGS = $(MF_CFLAGS) -I$(top_srcdir)/lib $(SANITIZE_CFLAGS)
tests_unit_test_files_LDFLAGS = $(SANITIZE_CFLAGS)
tests_unit_test_files_LDADD = tests/unit/libmf_files.a -ldl -lpthread
TESTS += tests/unit/test_files

# ---- the longer tier: a peer's test suite (CPython's regression tests) under the profiler ----
EXTRA_DIST += tests/system/peer.sh
check-peer: lib/libmalloc_freq.la mf_print/mf_print
	@MF_LIB='$(abs_top_builddir)/lib/.libs/libmalloc_freq.so' \
		MF_PRINT='$(abs_top_builddir)/mf_print/mf_print' $(SHELL) $(top_srcdir)/tests/system/peer.sh
.PHONY: check-peer
