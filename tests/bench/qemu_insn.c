/* A qemu-user plugin that counts the instructions the emulated program runs (each translated
 * block adds its count each time it runs), printed at exit as "insns N" on qemu's log
 * (-d plugin): make bench-arm64's measure of the profiler's cost per call on arm64, where this
 * machine cannot time arm64 code. Debian ships no qemu-plugin.h: these are the few declarations
 * of qemu 7.2's plugin API (version 1) that the counter needs. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   void (*cb)(qemu_plugin_id_t, struct qemu_plugin_tb *));
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op,
					      void *ptr, uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, void (*cb)(qemu_plugin_id_t, void *),
				    void *userdata);
void qemu_plugin_outs(const char *string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;
static uint64_t insns; /* (one counter: measure one-thread programs, as threads add unlocked) */

static void mf_insn_block(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	(void)id;
	qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns,
						 qemu_plugin_tb_n_insns(tb));
}

static void mf_insn_exit(qemu_plugin_id_t id, void *unused)
{
	(void)id, (void)unused;
	char line[64];
	snprintf(line, sizeof(line), "insns %" PRIu64 "\n", insns);
	qemu_plugin_outs(line);
}

__attribute__((visibility("default"))) int
qemu_plugin_install(qemu_plugin_id_t id, const struct qemu_info_t *info, int argc, char **argv)
{
	(void)info, (void)argc, (void)argv;
	qemu_plugin_register_vcpu_tb_trans_cb(id, mf_insn_block);
	qemu_plugin_register_atexit_cb(id, mf_insn_exit, NULL);
	return 0;
}
