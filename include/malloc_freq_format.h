/* malloc_freq on-disk format: the one definition, shared by the writer (lib/) and the reader
 * (mf_print/). Fixed-width records in the writer's byte order (marked by byte_order); no
 * pointers, no compression.
 * Change anything here and bump MF_FORMAT_VERSION. */
#ifndef MALLOC_FREQ_FORMAT_H
#define MALLOC_FREQ_FORMAT_H

#include <stdint.h>

/*
 * A profile directory `malloc_freq.<pid>[.<n>]/` holds
 *   <tid>[.<n>].prof  one per thread: an mf_prof_header, then an array of mf_node
 *   modules           the process's module map: an mf_modules_header, then count records, each
 *                     an mf_module_record and its path (path_len bytes, no NUL) padded with
 *                     zeros to a multiple of 8 bytes. (Version 1 had mf_module records: 4 KiB
 *                     of path each, most of it zeros; readers still read it.)
 *   process           (since version 3) the process: an mf_process_record, mapped shared like
 *                     the .prof files; who it is and how it ended.
 *   ended.pack        (since version 12) the files of threads that ended, each appended as a
 *                     record by a snapshot and its file removed (see below).
 *
 * A .prof file is a file-backed shared mapping while the thread runs, so every recorded call is
 * in the page cache the moment it is counted: a killed process leaves a readable file whose
 * state is still MF_STATE_RECORDING. Nodes are only ever appended; header.node_count is
 * published after the node it counts is written.
 *
 * The stack trie: node 0 is the root (no frame). Every other node is one frame under its parent,
 * and parent < own index, so the nodes form a tree by construction and a reader can validate it
 * in one pass. A recorded call walks root → outermost frame → ... → the caller of the allocation
 * function → a leaf whose module is MF_MODULE_ENTRY and whose rel_pc is the enum mf_entry value;
 * the call's count and bytes are added to that leaf only. A stack cut at the depth limit starts
 * with a frame of module MF_MODULE_TRUNCATED directly under the root.
 *
 * A frame is (module, rel_pc): module indexes the directory's module map, rel_pc is the return
 * address minus the module's load bias (the ELF virtual address), so frames of different
 * processes of the same binary are equal. MF_MODULE_NONE frames keep the absolute address.
 *
 * Since version 4, node slots also hold records that are not frames (node_count counts them):
 *   - every leaf is followed by MF_LEAF_SLOTS slots holding its struct mf_leaf (temporaries
 *     and the size histogram's first buckets), written (zeroed) before the leaf is published;
 *     and, if header.records has MF_RECORD_LIFE (MALLOC_FREQ_LIFETIMES=1), by MF_LIFE_SLOTS
 *     more holding its struct mf_life (MF_LIFE_SLOTS_V7 before version 8);
 *   - a leaf whose requests fall in more distinct size buckets than its mf_leaf holds has a
 *     child node of module MF_MODULE_SIZES (rel_pc, calls, bytes 0), followed by
 *     MF_SIZES_SLOTS slots of uint64_t counts, one per bucket, for the buckets beyond.
 * A reader steps over these slots; parent < own index holds for every node. Only leaves
 * (MF_MODULE_ENTRY) and MF_MODULE_SIZES nodes have slots after them: tag, truncation and
 * MF_MODULE_WEIGHT nodes (a leaf's other possible child, below) are plain nodes.
 */

#define MF_PROF_MAGIC	 "MFPROF\r\n" /* 8 bytes; \r\n catches text-mode mangling */
#define MF_MODULES_MAGIC "MFMODS\r\n"
#define MF_PROCESS_MAGIC "MFPROC\r\n"
/* 12: an ended thread's file may be packed by a snapshot into the directory's `ended.pack`
 * (below) and removed; the snapshot record's pack_len;
 * 11: the timeline's records hold calls and bytes by entry point (by_entry), after the
 * header (MF_HEADER_SIZE grew from 4096 to 3 pages); the process record's MF_PROCESS_DETACHED
 * and detached_ns (a process attached to, then detached from: older readers take it for one
 * running or ended unrecorded, as before);
 * 10: snapshots after the first of a chain hold what changed (snapshot record's builds_on,
 * the thread header's snap_* words), and name ended threads' files in `ended`;
 * 9: the thread's timeline (struct mf_timeline_record) in its header page;
 * 8: struct mf_life has max_blocks and lifetime_ns (MF_LIFE_SLOTS grew from 18 to 19);
 * 5: lifetimes may be sampled (struct mf_life); 4: leaf records (sizes, temporaries,
 * lifetimes), calls_off (runtime control), tags, time weights, snapshots; 3: the process
 * record; 2: module records of any size */
#define MF_FORMAT_VERSION  12u
#define MF_BYTE_ORDER_MARK 0x01020304u /* written natively; reads as 0x04030201 if swapped */
/* The page the writer lays its files and memory out in: the header's size and every offset
 * the library maps a file at are multiples of it. The library records only where the
 * kernel's pages are this size (arm64 kernels with 16 KiB or 64 KiB pages, RHEL 8's among
 * them, are not: there it says so and records nothing); the reader reads any page size. */
#define MF_PAGE_SIZE 4096u
/* The header's size (header_size: node 0 starts there): 3 pages since version 11, one page
 * before. A thread that keeps few timeline records never touches more than the first page. */
#define MF_HEADER_SIZE	   12288u
#define MF_HEADER_SIZE_V10 4096u

enum mf_state {
	MF_STATE_RECORDING = 1,	   /* the thread was running when the file was last written */
	MF_STATE_THREAD_EXIT = 2,  /* finalized at thread exit */
	MF_STATE_PROCESS_EXIT = 3, /* finalized by exit() while the thread was alive */
	MF_STATE_SNAPSHOT = 4,	   /* since version 4: a copy in a snapshot (below) of a thread
				      that was running; end_ns is when it was copied */
};

/* The allocation entry points, in this order everywhere (file, reader, reports). */
enum mf_entry {
	MF_ENTRY_MALLOC,
	MF_ENTRY_CALLOC,
	MF_ENTRY_REALLOC,
	MF_ENTRY_REALLOCARRAY,
	MF_ENTRY_POSIX_MEMALIGN,
	MF_ENTRY_ALIGNED_ALLOC,
	MF_ENTRY_MEMALIGN,
	MF_ENTRY_VALLOC,
	MF_ENTRY_PVALLOC,
	MF_ENTRY_COUNT
};

#define MF_ENTRY_NAMES                                                                             \
	{                                                                                          \
		"malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc",  \
		    "memalign", "valloc", "pvalloc"                                                \
	}

#define MF_MODULE_ENTRY	    0xffffffffu /* leaf: rel_pc is an enum mf_entry */
#define MF_MODULE_TRUNCATED 0xfffffffeu /* the stack was cut at the depth limit */
#define MF_MODULE_NONE	    0xfffffffdu /* no module maps the address; rel_pc is absolute */
/* Since version 4: MF_MODULE_TAG, a tag scope, rel_pc its index in the directory's `tags`
 * (see below); MF_MODULE_WEIGHT (MALLOC_FREQ_WEIGHT=time), a child of a leaf whose bytes field
 * holds the thread CPU time, in ns, that came before the leaf's calls; MF_MODULE_SIZES, a
 * child of a leaf followed by its dense size histogram (see above). */
#define MF_MODULE_TAG	 0xfffffffcu
#define MF_MODULE_WEIGHT 0xfffffffbu
#define MF_MODULE_SIZES	 0xfffffffau
#define MF_MODULE_MAX	 0xfffffff0u /* real module indexes are below this */

#define MF_THREAD_NAME_LEN 16
#define MF_PATH_LEN	   4096
#define MF_BUILD_ID_LEN	   20 /* GNU build-ids are 20 bytes (SHA-1); longer ones are cut */

struct mf_prof_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t header_size; /* MF_HEADER_SIZE (version 10 and older: MF_HEADER_SIZE_V10):
				 offset of node 0 */
	uint32_t node_size;   /* sizeof(struct mf_node) */
	uint32_t state;	      /* enum mf_state */
	uint32_t max_depth;   /* frames kept per stack (MALLOC_FREQ_DEPTH) */
	uint64_t pid;
	uint64_t tid;
	uint64_t sample_rate;  /* 1: every call recorded; N: on average one call in N */
	uint64_t node_count;   /* nodes written, root included */
	uint64_t start_ns;     /* CLOCK_REALTIME at file creation */
	uint64_t end_ns;       /* at finalization; 0 while recording */
	uint64_t calls_total;  /* calls seen by this thread, recorded or not */
	uint64_t calls_lost;   /* calls not in the trie: the file could not grow, or
				* recording stopped after an error */
	uint64_t calls_nested; /* calls that arrived while the profiler was recording in
				* this thread (a signal handler's): counted here, not
				* attributed to a stack */
	char thread_name[MF_THREAD_NAME_LEN];
	/* Since version 4 (runtime control, malloc_freq.h): calls made while recording was off
	 * for the process or the thread, counted here, in no stack and not in calls_total
	 * (scaled by the sampling interval, as calls_total). Zero in older files. */
	uint64_t calls_off;
	uint32_t weight;  /* since version 4: 1 if MF_MODULE_WEIGHT nodes may follow leaves */
	uint32_t records; /* since version 4: MF_RECORD_* bits: what follows each leaf */
	/* Since version 9: the thread's timeline (below). */
	uint32_t timeline_count;	 /* records written */
	uint32_t timeline_records;	 /* room for them (MF_TIMELINE_RECORDS); 0: none kept */
	uint64_t timeline_interval_ns;	 /* the least time between two records, now */
	uint64_t timeline_checked_ns;	 /* the thread's last look at the clock (0: none) */
	uint64_t timeline_checked_calls; /* and calls_total then */
	uint64_t timeline_checked_live;	 /* and (lifetimes) the process's live bytes then */
	/* Since version 10, written by snapshots alone (a reader ignores them): the last snapshot
	 * that took the file's state, and a hash of that state, so a later snapshot of the same
	 * chain leaves out a file that has not changed. */
	uint64_t snap_pid;     /* the process that took it */
	uint64_t snap_attempt; /* its snapshot attempt, numbered in that process from 1 */
	uint64_t snap_sum;     /* the hash of the file's state it took */
	uint64_t reserved[22]; /* zero */
};

/*
 * Since version 9: the timeline. A .prof file's header holds, at MF_TIMELINE_OFFSET,
 * timeline_count records of the thread's running totals over time. The thread looks at the
 * (coarse) clock each time calls_total crosses a multiple of MF_TIMELINE_STEP, and writes a
 * record when timeline_interval_ns have passed since its last one (since start_ns for the
 * first). When the thread's last look came an interval or more before this one (it was idle
 * in between), a record of that look comes first: its time and calls_total, flag
 * MF_TIMELINE_CALLS_ONLY, no other figures but the process's live bytes. When the room is full,
 * every other record goes (the later of each pair stays: totals stay exact) and the interval
 * doubles. A record is written before the count that covers it. With the file's end (end_ns and the
 * trie's totals) and the last look (timeline_checked_*), a reader has the thread's calls over time
 * to within MF_TIMELINE_STEP calls.
 * Since version 11 a record also holds the calls and bytes of the thread's leaves by entry
 * point (by_entry, enum mf_entry: a leaf's rel_pc), in a whole record; zeros in a calls-only
 * one. Versions 9 and 10 have records of MF_TIMELINE_RECORD_SIZE_V10 bytes (the fields before
 * by_entry), in their one-page header. The writer reserves the header's pages after the
 * first on disk only when a record first reaches them: a file whose thread keeps few records
 * has a hole there.
 */
#define MF_TIMELINE_OFFSET     1024u /* in the header */
#define MF_TIMELINE_RECORDS    48u
#define MF_TIMELINE_STEP       64u /* a power of two */
#define MF_TIMELINE_CALLS_ONLY 1u  /* flags: time and calls alone are known */

struct mf_timeline_record {
	uint64_t time_ns;     /* CLOCK_REALTIME_COARSE */
	uint64_t calls;	      /* calls_total then */
	uint64_t bytes;	      /* requested by the calls in the trie (its leaves' bytes) */
	uint64_t temporaries; /* its leaves' temporaries */
	uint64_t live_bytes;  /* (lifetimes) of the blocks its leaves allocated, the bytes and */
	uint64_t live_blocks; /* blocks not freed then (by any thread) */
	uint32_t flags;	      /* MF_TIMELINE_* */
	uint32_t reserved0;
	/* (lifetimes) the process's live requested bytes then, all threads' (the lifetimes' one
	 * sum: exact with one thread, else to within a batch per thread); in a calls-only record
	 * too, as at that look */
	uint64_t process_live;
	/* Since version 11: the calls and requested bytes of its leaves by entry point (unscaled,
	 * as calls and bytes), their sums the trie's calls and bytes */
	struct mf_timeline_entry {
		uint64_t calls, bytes;
	} by_entry[MF_ENTRY_COUNT];
};
#define MF_TIMELINE_RECORD_SIZE_V10 64u /* versions 9 and 10: up to by_entry */

struct mf_node {
	uint64_t rel_pc;
	uint32_t parent; /* index of the parent node, < own index; 0 for frames under the root */
	uint32_t module; /* module map index, or an MF_MODULE_* value */
	uint64_t calls;	 /* calls whose stack ends here (leaves only) */
	uint64_t bytes;	 /* bytes those calls requested */
};

/*
 * Version 4: what happened to a leaf's calls besides their count (see the trie above).
 * Size buckets: bucket 0 counts zero-byte requests exactly; bucket b (1 to 64) counts requests
 * of 2^(b-1) to 2^b - 1 bytes. A temporary is a block freed (by free, or by a realloc that
 * succeeds or shrinks it to nothing) before its thread's next allocation call: heaptrack's
 * definition, which needs only the thread's last block.
 */
#define MF_SIZE_BUCKETS	  65
#define MF_SIZE_BUCKET(n) ((n) ? 64u - (unsigned)__builtin_clzll((unsigned long long)(n)) : 0u)
#define MF_LEAF_SIZES	  6  /* buckets a leaf record holds itself */
#define MF_LEAF_SLOTS	  2  /* node slots of a struct mf_leaf */
#define MF_SIZES_SLOTS	  17 /* node slots of MF_SIZE_BUCKETS counts (and 3 zero) */

struct mf_leaf {
	uint64_t temporaries; /* calls whose block was freed before the thread's next call */
	uint8_t size_key[8];  /* size_count[i] counts bucket size_key[i] - 1; 0: unused. Keys
				 are taken in order, and [MF_LEAF_SIZES..7] stay 0. Buckets
				 beyond these go to the leaf's MF_MODULE_SIZES child. */
	uint64_t size_count[MF_LEAF_SIZES];
};

/* Lifetimes (MALLOC_FREQ_LIFETIMES=1): what became of a leaf's blocks. blocks and bytes are
 * written by the thread that allocated them; frees and freed_bytes by whichever thread freed
 * them (atomically), also after the allocating thread ended. blocks - frees are the blocks
 * still live when the file was read: at exit, the leaks; in a killed process's file, those
 * live at the last moment recorded. peak_*: the leaf's live blocks and bytes when the
 * process's live bytes were last at their maximum (DHAT's t-gmax; the process record says
 * how much and when). Since version 6 they are written lazily: each maximum is numbered
 * (the process record's MF_PROCESS_PEAK_ID), and peak_seen says which one peak_* are of; a
 * leaf whose peak_seen is not the process's last number held at the peak what it holds now
 * (blocks - frees, bytes - freed_bytes). At exit and in a snapshot every leaf is brought up
 * to date; a killed process's files may need that done by the reader.
 * Since version 5, lifetimes may come with sample_rate N > 1: then only the blocks of sampled
 * calls are tracked, every count here (and the process record's peak counters) counts those,
 * and a reader multiplies them by N, as the calls; the peak is the sampled blocks' peak. */
#define MF_RECORD_LIFE	 1u
#define MF_LIFE_SLOTS	 19
#define MF_LIFE_SLOTS_V7 18 /* versions 4 to 7: the record up to lifetime[], no more */
/* b: lifetimes of 2^(b-1) to 2^b - 1 ns (0: under 1 ns); the last also holds the longer ones */
#define MF_LIFETIME_BUCKETS 64
struct mf_life {
	uint64_t blocks;      /* calls that returned a block (tracked from then on) */
	uint64_t bytes;	      /* the bytes those calls requested */
	uint64_t frees;	      /* of those blocks, freed (free, realloc) by any thread */
	uint64_t freed_bytes; /* their requested bytes */
	uint64_t peak_blocks; /* live at the process's peak */
	uint64_t peak_bytes;
	/* the most of its bytes live at once, as its thread saw them: taken when the allocating
	 * thread adds a block, against the frees counted by then from any thread (a free by
	 * another thread lowers the live count from then on, never a maximum already taken) */
	uint64_t max_bytes;
	uint64_t peak_seen; /* (version 6) the process's maximum peak_* are of (see above) */
	/* the freed blocks by nanoseconds lived, allocation to free (the time-stamp counter's) */
	uint64_t lifetime[MF_LIFETIME_BUCKETS];
	/* Since version 8 (older records end before these: MF_LIFE_SLOTS_V7) */
	uint64_t max_blocks;	   /* the most of its blocks live at once, as max_bytes */
	uint64_t lifetime_ns;	   /* the nanoseconds lived by the blocks lifetime[] counts, summed
				      (modulo 2^64: 584 years) */
	uint64_t life_reserved[2]; /* zero */
};

struct mf_modules_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t record_size; /* sizeof(struct mf_module_record); version 1: struct mf_module */
	uint32_t count;	      /* records that follow */
	uint64_t pid;
	uint64_t reserved[4];
};

struct mf_module_record {
	uint64_t bias;	 /* load bias: runtime address = bias + ELF virtual address */
	uint64_t start;	 /* lowest runtime address of its PT_LOAD segments */
	uint64_t end;	 /* one past the highest */
	uint32_t loaded; /* 1 while mapped at the last update, 0 once unloaded */
	uint32_t build_id_len;
	uint8_t build_id[MF_BUILD_ID_LEN];
	uint32_t path_len; /* < MF_PATH_LEN; "[vdso]" etc. for nameless objects */
};
#define MF_MODULE_PATH_PAD(len) ((8 - (len) % 8) % 8)

/* A module as a reader holds it; version 1's record. */
struct mf_module {
	uint64_t bias;	 /* load bias: runtime address = bias + ELF virtual address */
	uint64_t start;	 /* lowest runtime address of its PT_LOAD segments */
	uint64_t end;	 /* one past the highest */
	uint32_t loaded; /* 1 while mapped at the last update, 0 once unloaded */
	uint32_t build_id_len;
	uint8_t build_id[MF_BUILD_ID_LEN];
	uint32_t reserved;
	char path[MF_PATH_LEN]; /* NUL-terminated; "[vdso]" etc. for nameless ones */
};

/*
 * The process record `process`, made with the directory (at the process's first recorded
 * call) and updated in place: who the process is (pid, parent, executable, command line, start
 * time) and how it ended. The process itself writes its end at exit() (its status from an
 * on_exit handler), _exit() and _Exit(); a profiled parent writes a child's end when its wait
 * returns it (a killed child says nothing itself); an image started by exec marks the image it
 * replaced (same pid and start time) MF_PROCESS_EXECED and names it in exec_from. A record
 * still MF_PROCESS_RUNNING belongs to a process that is running, or that ended without any of
 * that (killed with no profiled parent, exec'd into a program not profiled): a reader tells
 * them apart by pid and start time.
 */
#define MF_PROCESS_SIZE	 8192u
#define MF_CMDLINE_LEN	 2048u
#define MF_EXEC_FROM_LEN 64u

enum mf_process_state {
	MF_PROCESS_RUNNING = 1,	   /* running, or ended unrecorded */
	MF_PROCESS_EXITED = 2,	   /* exit() or a return from main; status: the exit status */
	MF_PROCESS_QUICK_EXIT = 3, /* _exit() or _Exit(); status: its argument */
	MF_PROCESS_EXECED = 4,	   /* replaced by another image (whose exec_from names this one) */
	MF_PROCESS_SIGNALED = 5,   /* killed; status: the signal */
};

/* Process-wide counters (counters[]): calls made by threads that had no file to record them
 * in (it could not be created, there was no memory for the thread's state, or recording had
 * stopped), and the bytes they requested (saturating at 2^64 - 1). */
enum mf_process_counter {
	MF_PROCESS_UNRECORDED_CALLS = 0,
	MF_PROCESS_UNRECORDED_BYTES = 1,
	/* (MALLOC_FREQ_LIFETIMES=1) frees of blocks the profiler never saw allocated: before it
	 * loaded, by the bootstrap arena, by another allocator; double and invalid frees (0
	 * under sampling: not known, as unsampled blocks are not seen either) */
	MF_PROCESS_UNKNOWN_FREES = 2,
	/* (lifetimes) the process's peak of live requested bytes, its blocks then, and when it
	 * was left (CLOCK_REALTIME ns; 0: never: the peak is the end; since version 6, when it
	 * was reached); under sampling, of the sampled blocks, not scaled (the thread files'
	 * sample_rate scales them) */
	MF_PROCESS_PEAK_BYTES = 3,
	MF_PROCESS_PEAK_BLOCKS = 4, /* (version 6: written at exit; a reader sums the leaves) */
	MF_PROCESS_PEAK_NS = 5,	    /* (version 6: when it was reached) */
	MF_PROCESS_PEAK_ID = 6,	    /* (version 6) the maximums so far: see struct mf_life */
};

#define MF_PROCESS_STATUS      1u /* status holds what state says */
#define MF_PROCESS_BY_PARENT   2u /* the end was written by the parent, from its wait */
#define MF_PROCESS_CORE	       4u /* killed with a core dump */
#define MF_PROCESS_CMDLINE_CUT 8u /* the command line was longer than cmdline holds */
/* The program's runtime ends the process by a system call of its own (Go's exit_group), past
 * exit() and _exit(): it writes no end of its own; a parent's is its exit. Since version 7;
 * zero in older records. */
#define MF_PROCESS_RAW_EXIT 16u
/* malloc_freq --detach stopped recording in this process at detached_ns (it was attached to:
 * its record was made then, at start_ns); state stays MF_PROCESS_RUNNING, as nothing writes its
 * end after. Since version 11; zero in older records. */
#define MF_PROCESS_DETACHED 32u

struct mf_process_record {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t record_size; /* MF_PROCESS_SIZE */
	uint32_t state;	      /* enum mf_process_state */
	int32_t status;	      /* exit status or signal number, by state (MF_PROCESS_STATUS) */
	uint32_t flags;	      /* MF_PROCESS_* bits */
	uint64_t pid;
	uint64_t ppid;	      /* the parent when the record was made */
	uint64_t start_ticks; /* start time in clock ticks after boot (/proc/<pid>/stat field 22):
				 with pid, names the process, through exec too */
	uint64_t start_ns;    /* CLOCK_REALTIME when the record was made */
	uint64_t end_ns;      /* when its end was written; 0 while running */
	uint32_t argc;	      /* arguments in cmdline */
	uint32_t cmdline_len; /* bytes of cmdline used: the arguments, each ending in NUL */
	uint32_t exe_len;     /* bytes of exe used, no NUL */
	uint32_t reserved0;
	char exec_from[MF_EXEC_FROM_LEN]; /* the directory's name (no path) of the image this one
					     replaced, NUL-terminated; empty: none */
	uint64_t counters[192];		  /* enum mf_process_counter; the rest zero, reserved */
	uint64_t image_ns; /* CLOCK_REALTIME when the profiler was loaded into this image (its
			      exec or start), which a forked child keeps: names the image that
			      forked it among its parent's. Since version 7; 0: not known (older
			      writers) */
	uint64_t
	    detached_ns; /* with MF_PROCESS_DETACHED, when (CLOCK_REALTIME); since version 11 */
	uint64_t reserved[43]; /* zero */
	char exe[MF_PATH_LEN]; /* the executable, /proc/<pid>/exe at start (no /proc: AT_EXECFN) */
	char cmdline[MF_CMDLINE_LEN];
};

/*
 * Since version 4: snapshots (malloc_freq_snapshot, malloc_freq_reset; the snapshot signal and
 * interval). A snapshot is a directory `snap.<n>[.<label>]/` in the process directory, n = 1,
 * 2, ... in the order taken: `snapshot`, an mf_snapshot_record, and a <tid>[.<n>].prof file
 * for thread files the process had then. A running thread's is a copy of its file as it stood
 * (header state MF_STATE_SNAPSHOT, node_count as read before its nodes were copied, so its
 * trie is a prefix of the live file's: the same nodes at the same indexes, counts no larger;
 * since version 10 end_ns is the snapshot's time_ns). An ended thread's file, final: before
 * version 10 a hard link to it; since, named in `ended` (one name a line, each ending in '\n')
 * and read in the process directory; with lifetimes a copy while it can still change (a block
 * of it live, or a leaf's peak_* not 0: later frees and peaks change the file), named once
 * it cannot. Made as `.snap.<n>.tmp/` and renamed when complete: a reader sees a whole snapshot
 * or none. Frames index the process directory's `modules`, which only grows. Readers of a
 * process directory do not descend into snapshots.
 *
 * Since version 10, a snapshot may build on the one before it (builds_on, in its record):
 * then it holds and names only the thread files that changed since that one took them (a
 * thread that recorded, or whose blocks were freed, or that ended). Its state is, for each
 * thread file, the newest of it in itself and the snapshots it builds on, back to the first
 * that builds on none (a full one). Interval and signal snapshots build on the one before,
 * unless that one is of another process image or failed; malloc_freq_snapshot's and
 * malloc_freq_reset's are full.
 */
#define MF_SNAPSHOT_MAGIC     "MFSNAP\r\n"
#define MF_SNAPSHOT_LABEL_LEN 64 /* a label's bytes kept (cut, not refused), NUL included */
#define MF_SNAPSHOT_RESET     1u /* flags: malloc_freq_reset's: counting starts over here */

struct mf_snapshot_record {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t record_size; /* sizeof(struct mf_snapshot_record) */
	uint32_t flags;	      /* MF_SNAPSHOT_* bits */
	uint64_t number;      /* n of snap.<n> */
	uint64_t pid;
	uint64_t time_ns; /* CLOCK_REALTIME when it was taken */
	uint64_t threads; /* thread files it holds or names, and (since version 12) the packed
			     threads new to its chain */
	char label[MF_SNAPSHOT_LABEL_LEN]; /* NUL-terminated; empty: none */
	uint64_t builds_on;   /* since version 10: the number of the snapshot this one builds on;
				 0: none, it is full (older snapshots are) */
	uint64_t pack_len;    /* since version 12: the bytes of `ended.pack` when it was taken: the
				 records below hold threads of its state (0: none; see below) */
	uint64_t reserved[2]; /* zero */
};

/*
 * Since version 12: the pack `ended.pack`. A snapshot (not thread exit) appends the file of
 * every thread that ended (MF_STATE_THREAD_EXIT) without lifetimes, whose image is at most
 * MF_PACK_IMAGE_MAX bytes, to the pack, checks the write, and only then removes the file; so
 * a long run of short threads with interval snapshots keeps one file for them, not one per
 * thread (each at least a page on disk) that every later snapshot names again. A record: an
 * mf_pack_record, then header_len bytes of the thread file's header (its start: the rest of the
 * header is zeros), then nodes_len bytes of its nodes (node_count of them). Records follow each
 * other, each a multiple of 8 bytes long. The pack has one writer (the snapshot, under its
 * lock); a write that fails or is short is cut off again and the file stays; if it cannot be
 * cut off, or the pack is not the length written (removed or replaced meanwhile), nothing
 * more is packed in that process. A removal that fails with the file gone keeps the record.
 * The file of a thread still listed (one that ended in seccomp strict mode) is never packed.
 * A run without snapshots packs nothing.
 *
 * A reader takes the records in order up to the first that is not whole, not right (magic,
 * byte order, version, sizes, name not a thread file's, header not fitting) or whose check
 * does not match. Nothing is lost by one cut short at the pack's end whose file is still there (a
 * process killed while writing it): the file is read. The same thread's file may still be in
 * the directory beside its record (killed between the write and the removal): the file, of
 * the same thread (tid and start), is left out. A thread file name (name) may occur in more
 * than one record: a thread id used again by a later thread, whose file took the name freed;
 * two records of one name and the same thread are one thread (said: the writer never does it).
 *
 * A snapshot holds the threads of the records below its pack_len (the pack's length when it
 * was taken, after its own records): a thread file a snapshot copies or names (`ended`) is
 * packed, if ever, in the first record of its name at or after its pack_len. A pack whose
 * records end before a snapshot's pack_len (cut short, damaged, replaced or removed) has lost
 * threads that snapshot and every later reading hold: a reader says so, naming the pack.
 */
#define MF_PACK_NAME	  "ended.pack"
#define MF_PACK_MAGIC	  "MFPACK\r\n"
#define MF_PACK_NAME_LEN  48	      /* a thread file's name, NUL-padded */
#define MF_PACK_IMAGE_MAX (64u << 10) /* a larger thread file stays as it is */

struct mf_pack_record {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t record_size; /* sizeof(struct mf_pack_record) */
	uint32_t reserved0;
	uint64_t header_len;	     /* bytes of the file's header that follow (a multiple of 8) */
	uint64_t nodes_len;	     /* bytes of its nodes that follow */
	uint64_t check;		     /* mf_hash_words() of this record (check 0) and what follows */
	char name[MF_PACK_NAME_LEN]; /* the thread file's name in the directory */
};

/* A hash of the n bytes (a multiple of 8) at p, on from h: a pack record's check (h 1 at the
 * start of the record, whose check is 0 when hashed), and the writer's mark of a thread file's
 * state in its header (snap_sum: read by the writer only). */
static inline uint64_t mf_hash_words(uint64_t h, const void *p, uint64_t n)
{
	const unsigned char *b = (const unsigned char *)p;
	for (uint64_t i = 0; i + 8 <= n; i += 8) {
		uint64_t w;
		__builtin_memcpy(&w, b + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 31;
	}
	return h;
}

/*
 * Since version 4: tag scopes (malloc_freq_tag_push). A thread's calls made inside tags are
 * recorded under tag nodes: MF_MODULE_TAG frames directly under the root, the outermost tag
 * first, each under the one it is nested in (a stack cut at the depth limit has its
 * MF_MODULE_TRUNCATED frame under them). `tags` in the process directory names them: an
 * mf_tags_header, then count names of MF_TAG_NAME_LEN bytes each, NUL-padded; index i is
 * rel_pc i. Names are only ever added (a name is written before the count that covers it).
 */
#define MF_TAGS_MAGIC	"MFTAGS\r\n"
#define MF_TAG_NAME_LEN 64   /* a name's bytes, NUL included: longer ones are cut */
#define MF_TAGS_MAX	3968 /* names in one process; more are recorded as the last one */

struct mf_tags_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint32_t count;	   /* names that follow */
	uint32_t name_len; /* MF_TAG_NAME_LEN */
	uint64_t reserved[2];
};

/*
 * The rule cache `<MALLOC_FREQ_CACHE>/<build-id>.rules`, one per program (the build-id of its
 * main executable, in hex), written and read by the library only: the frame rules libunwind has
 * confirmed in earlier runs of the program, so a run need not read them from .eh_frame, nor
 * ask libunwind, again. An mf_rules_header, then count entries in ascending order of their
 * keys, none repeated, none 0. A key is a hash of the module's build-id and the return
 * address's offset in it; its rule is the word the rule table keeps (lib/unwind/rule.h) with
 * epoch 0, a step or the end of the stack. Version 2 held keys alone (a hash of the rule too:
 * the rule was read from the binary in every run); version 3's checksum did not cover the
 * flags.
 */
#define MF_RULES_MAGIC	  "MFRULE\r\n"
#define MF_RULES_VERSION  4u
#define MF_RULES_MAX	  (1u << 20) /* entries in one file (16 MiB) */
#define MF_RULES_COMPLETE 1u /* flags: the run that wrote it needed nothing more of libunwind */

struct mf_rules_header {
	char magic[8];
	uint32_t version;
	uint32_t byte_order;
	uint64_t count;	 /* entries that follow */
	uint64_t check;	 /* mf_rules_check() of the entries, the flags and reserved */
	uint64_t origin; /* which confirmed them: a hash of the profiler's version and libunwind's
			    shared object name; a file of another is not used */
	uint32_t flags;
	uint32_t reserved;
};

struct mf_rules_entry {
	uint64_t key;
	uint64_t rule;
};

/* A checksum of the header's flags and reserved word and of the entries, so a file cut short
 * or overwritten in part is noticed. */
static inline uint64_t mf_rules_check(const struct mf_rules_entry *e, uint64_t count,
				      uint32_t flags, uint32_t reserved)
{
	uint64_t h = 0x6a09e667f3bcc908ull ^ count;
	h = (h ^ ((uint64_t)reserved << 32 | flags)) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 31;
	for (uint64_t i = 0; i < count; i++) {
		h = (h ^ e[i].key) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 31;
		h = (h ^ e[i].rule) * 0x9e3779b97f4a7c15ull;
		h ^= h >> 31;
	}
	return h;
}

/* A compile-time check that writer and reader agree on layout. */
#define MF_FORMAT_ASSERT_LAYOUT()                                                                  \
	_Static_assert(sizeof(struct mf_prof_header) <= MF_TIMELINE_OFFSET &&                      \
			   MF_TIMELINE_OFFSET +                                                    \
				   MF_TIMELINE_RECORDS * sizeof(struct mf_timeline_record) <=      \
			       MF_HEADER_SIZE &&                                                   \
			   MF_HEADER_SIZE % MF_PAGE_SIZE == 0,                                     \
		       "the timeline fits the header");                                            \
	_Static_assert(__builtin_offsetof(struct mf_timeline_record, by_entry) ==                  \
			   MF_TIMELINE_RECORD_SIZE_V10,                                            \
		       "version 10's timeline record is a prefix");                                \
	_Static_assert(sizeof(struct mf_node) == 32, "node is 32 bytes");                          \
	_Static_assert(sizeof(struct mf_leaf) == MF_LEAF_SLOTS * 32, "leaf record fills slots");   \
	_Static_assert(sizeof(struct mf_life) == MF_LIFE_SLOTS * 32, "life record fills slots");   \
	_Static_assert(__builtin_offsetof(struct mf_life, max_blocks) == MF_LIFE_SLOTS_V7 * 32,    \
		       "version 7's life record is a prefix");                                     \
	_Static_assert(MF_SIZES_SLOTS * 4 >= MF_SIZE_BUCKETS, "size counts fit their slots");      \
	_Static_assert(sizeof(struct mf_module_record) == 56, "module record is 56 bytes");        \
	_Static_assert(sizeof(struct mf_module) == 4152, "version 1 module record is 4152 bytes"); \
	_Static_assert(sizeof(struct mf_rules_header) == 48, "rule cache header is 48 bytes");     \
	_Static_assert(sizeof(struct mf_rules_entry) == 16, "rule cache entry is 16 bytes");       \
	_Static_assert(sizeof(struct mf_process_record) == MF_PROCESS_SIZE,                        \
		       "process record is MF_PROCESS_SIZE bytes");                                 \
	_Static_assert(sizeof(struct mf_snapshot_record) == 152, "snapshot record is 152 bytes");  \
	_Static_assert(sizeof(struct mf_pack_record) == 96, "pack record is 96 bytes");            \
	_Static_assert(sizeof(struct mf_tags_header) == 40, "tags header is 40 bytes")

#endif
