/* test_driver_loader.c -- the loader refuses broken drivers, naming the
 * file and the reason; optional methods are used only when the driver's
 * minor version and descriptor size allow; a file that is not a complete
 * ELF shared object for this machine is refused before dlopen; init has
 * a deadline.  The fake drivers are built from tests/drivers/fake/ into
 * $GB_BUILD/tests/fakedrv/.  (Crashes, exit() and SIGTERM while loading
 * end the process: tests/integration/driver_loading.sh covers them.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cancel.h"
#include "catalog.h"
#include "drivers.h"
#include "http.h"
#include "log.h"
#include "../../drivers/aws/aws.h"
#include "../../drivers/azure/azure.h"
#include "../../drivers/gcp/gcp.h"

static char path[512];

static const char *fake(const char *name)
{
	const char *b = getenv("GB_BUILD");
	snprintf(path, sizeof(path), "%s/tests/fakedrv/%s.so", b ? b : "build",
	         name);
	if (access(path, R_OK) != 0)
		fail_msg("%s is not built (run through make test)", path);
	return path;
}

static void refused(const char *name, const char *expect_name,
                    const char *reason)
{
	gb_drv *drv = NULL;
	char err[600];
	const char *p = fake(name);
	assert_int_equal(gb_drv_open(p, expect_name, &drv, err, sizeof(err)), -1);
	assert_null(drv);
	if (!strstr(err, p))
		fail_msg("error does not name the file: %s", err);
	if (!strstr(err, reason))
		fail_msg("error lacks \"%s\": %s", reason, err);
}

static void test_missing_file(void **state)
{
	gb_drv *drv;
	char err[600];
	(void)state;
	assert_int_equal(gb_drv_open("/nonexistent/x.so", NULL, &drv, err,
	                             sizeof(err)), -1);
	assert_non_null(strstr(err, "/nonexistent/x.so: cannot load"));
}

static void test_not_a_driver(void **state)
{
	(void)state;
	refused("fake_no_entry", NULL, "does not export gb_driver_entry()");
}

static void test_refuses_host(void **state)
{
	(void)state;
	refused("fake_refuses", NULL, "refused this host");
}

static void test_abi_major_mismatch(void **state)
{
	(void)state;
	refused("fake_bad_major", NULL, "ABI major 2 does not match the host's 1");
}

static void test_short_descriptor(void **state)
{
	(void)state;
	refused("fake_short", NULL, "descriptor is 24 bytes, shorter than");
}

static void test_null_mandatory(void **state)
{
	(void)state;
	refused("fake_null_create", NULL, "has no create() method, which is "
	                                  "mandatory");
}

static void test_wrong_name(void **state)
{
	(void)state;
	refused("fake_good", "aws", "configured as driver 'aws' but the file "
	                            "is driver 'fake'");
}

static void out_cb(void *ud, const char *json)
{
	snprintf(ud, 64, "%s", json);
}

static void test_good_driver(void **state)
{
	gb_drv *drv = NULL;
	char err[600], got[64] = "";
	gb_error e;
	gb_kvs opts = {0};
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	assert_true(drv->ready);
	assert_string_equal(drv->d->version, "1.2.3");
	assert_true(GB_DRV_HAS(drv, command));
	assert_false(GB_DRV_HAS(drv, refresh_prices)); /* NULL pointer */
	memset(&e, 0, sizeof(e));
	assert_int_equal(drv->d->command(drv->ctx, "ping", 0, NULL, out_cb, got,
	                                 &e), 0);
	assert_string_equal(got, "{\"pong\": true}");
	/* the loader added data_dir and bin_dir */
	assert_non_null(gb_kvs_get(&drv->options, "data_dir"));
	assert_non_null(gb_kvs_get(&drv->options, "bin_dir"));
	gb_drv_close(drv);
}

/* A minor-0 driver: command() lies beyond its descriptor, so the host
 * must not consider it present even though the bytes there are not 0. */
static void test_old_minor_optional_not_called(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_old_minor"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(drv->d->abi_minor, 0);
	assert_true(drv->d->command != NULL);     /* garbage is there */
	assert_false(GB_DRV_HAS(drv, command));   /* and is not used */
	/* nor is billing_minimum_s (minor 5), garbage there too */
	assert_int_equal(gb_drv_billing_minimum_s(drv), 0);
	gb_drv_close(drv);
}

/* gb_offer.available (minor 6) is read only from a driver that has it:
 * an older driver's offers end before it (the fake leaves 5 there). */
static void test_old_minor_offer_available(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	gb_kvs opts = {0};
	gb_drivers ds;
	gb_catalog *cat = gb_catalog_new();
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_old_minor"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	ds.v = &drv;
	ds.n = 1;
	assert_int_equal(gb_drivers_offers(&ds, cat, NULL), 1);
	assert_int_equal(gb_catalog_at(cat, 0)->gpu_count, 8);
	assert_int_equal(gb_catalog_at(cat, 0)->available, 0);
	gb_catalog_free(cat);
	gb_drv_close(drv);
}

/* billing_minimum_s (minor 5): the shipped drivers carry their clouds'
 * documented minimums; the host reads it from a current descriptor and
 * says 0 for no driver. */
static void test_billing_minimum(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	(void)state;
	assert_int_equal(aws_driver.billing_minimum_s, 60);
	assert_int_equal(gcp_driver_desc.billing_minimum_s, 60);
	assert_int_equal(azure_driver_desc.billing_minimum_s, 0);
	assert_true(aws_driver.abi_minor >= 5);
	assert_int_equal(gb_drv_billing_minimum_s(NULL), 0);
	assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(drv->d->abi_minor, GB_DRIVER_ABI_MINOR);
	assert_int_equal(gb_drv_billing_minimum_s(drv), 0); /* not set */
	gb_drv_close(drv);
}

static void test_init_failure_kept_with_status(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	gb_kvs opts = {0};
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_init_fails"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), -1);
	assert_false(drv->ready);
	assert_non_null(strstr(drv->status, "failed to initialise: no "
	                                    "credentials: set FAKE_TOKEN "
	                                    "(NoCredentials)"));
	gb_drv_close(drv);
}

/* Transport options the host reads itself: a value it cannot use is an
 * error naming the driver, the option and what it accepts -- the driver
 * is not initialised with a silent default. */
static void test_bad_transport_options(void **state)
{
	static const char *const cases[][3] = {
		{"http_attempts", "lots", "option http_attempts: expected a whole "
		                          "number from 1 to 99, found \"lots\""},
		{"http_attempts", "0", "from 1 to 99, found \"0\""},
		{"http_timeout_ms", "5s", "option http_timeout_ms: expected a "
		                          "whole number"},
		{"backoff_base_ms", "-5", "option backoff_base_ms"},
		{"max_in_flight", "1e3", "option max_in_flight"},
		{"rate.RunInstances", "fast", "option rate.RunInstances: expected "
		                              "CAPACITY/REFILL_PER_SECOND"},
		{"rate.Describe", "5/0", "found \"5/0\""},
		{"init_timeout_ms", "0", "option init_timeout_ms: expected a "
		                         "whole number from 1 to 3600000, found "
		                         "\"0\""},
		{"init_timeout_ms", "3600001", "option init_timeout_ms"},
		{"init_timeout_ms", "30s", "found \"30s\""},
	};
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		gb_drv *drv = NULL;
		char err[600] = "";
		gb_kvs opts = {0};
		assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
		                             sizeof(err)), 0);
		gb_kvs_set(&opts, cases[i][0], cases[i][1]);
		assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), -1);
		assert_false(drv->ready);
		if (!strstr(err, cases[i][2]) || !strstr(err, "driver 'fake'"))
			fail_msg("%s=%s: error lacks \"%s\": %s", cases[i][0],
			         cases[i][1], cases[i][2], err);
		assert_string_equal(drv->status, err);
		gb_kvs_free(&opts);
		gb_drv_close(drv);
	}
	/* good values, and 0/off dropping a bucket, are accepted */
	{
		gb_drv *drv = NULL;
		char err[600];
		gb_kvs opts = {0};
		assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
		                             sizeof(err)), 0);
		gb_kvs_set(&opts, "http_attempts", "3");
		gb_kvs_set(&opts, "backoff_cap_ms", "2000");
		gb_kvs_set(&opts, "rate.RunInstances", "5/2.5");
		gb_kvs_set(&opts, "rate.Describe", "off");
		gb_kvs_set(&opts, "rate.default", "0");
		gb_kvs_set(&opts, "init_timeout_ms", "3600000");
		assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
		gb_kvs_free(&opts);
		gb_drv_close(drv);
	}
}

/* The driver's documented default_rates become the host's buckets; the
 * config's rate.<class> overrides one, adds one, or drops one (off/0).
 * And the shipped cloud drivers document theirs. */
static void test_default_rates(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	gb_kvs opts = {0};
	double cap = 0, refill = 0;
	const gb_driver *shipped[] = {&aws_driver, &azure_driver_desc,
	                              &gcp_driver_desc};
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
	                             sizeof(err)), 0);
	gb_kvs_set(&opts, "rate.fake-b", "off");
	gb_kvs_set(&opts, "rate.fake-c", "7/0.5");
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	assert_int_equal(gb_http_get_rate(drv->http, "fake-a", &cap, &refill), 0);
	assert_true(cap == 3 && refill == 1);
	assert_int_equal(gb_http_get_rate(drv->http, "fake-b", &cap, &refill), -1);
	assert_int_equal(gb_http_get_rate(drv->http, "fake-c", &cap, &refill), 0);
	assert_true(cap == 7 && refill == 0.5);
	gb_kvs_free(&opts);
	gb_drv_close(drv);

	for (size_t i = 0; i < sizeof(shipped) / sizeof(shipped[0]); i++) {
		const char *const *p = shipped[i]->default_rates;
		size_t n = 0;
		assert_true(shipped[i]->abi_minor >= 2);
		assert_non_null(p);
		for (; p[0]; p += 2, n++) {
			assert_non_null(p[1]);
			if (gb_http_parse_rate(p[1], &cap, &refill) != 0)
				fail_msg("%s: default rate %s=%s does not parse",
				         shipped[i]->name, p[0], p[1]);
		}
		assert_true(n >= 3);
	}
	/* EC2's own RunInstances bucket */
	assert_string_equal(aws_driver.default_rates[0], "RunInstances");
	assert_string_equal(aws_driver.default_rates[1], "5/2");
}

/* A configured option that neither the driver (its ABI 1.4 options
 * list) nor the host reads is named in a warning, not ignored in
 * silence; known ones, KEY.* patterns and the host's own are not. */
static void test_unknown_option_warned(void **state)
{
	gb_drv *drv = NULL;
	char err[600], buf[8192];
	gb_kvs opts = {0};
	FILE *f = tmpfile();
	size_t n;
	(void)state;
	assert_non_null(f);
	assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
	                             sizeof(err)), 0);
	gb_kvs_set(&opts, "known", "1");
	gb_kvs_set(&opts, "image", "img");
	gb_kvs_set(&opts, "image.eu-west-1", "img-eu");
	gb_kvs_set(&opts, "rate.fake-a", "1/1");
	gb_kvs_set(&opts, "ca_file", "/dev/null");
	gb_kvs_set(&opts, "state_dir", "/tmp");
	gb_kvs_set(&opts, "init_timeout_ms", "5000");
	gb_kvs_set(&opts, "knwon", "1");
	gb_kvs_set(&opts, "image.", "x");
	gb_log_set_file(f);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	gb_log_set_file(NULL);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	assert_non_null(strstr(buf, "option knwon is not one driver 'fake' "
	                            "reads, so it is ignored (a typo?). Its "
	                            "options: known, image.*"));
	assert_non_null(strstr(buf, "option image. is not one"));
	assert_null(strstr(buf, "option known "));
	assert_null(strstr(buf, "option image.eu-west-1"));
	assert_null(strstr(buf, "option image is"));
	assert_null(strstr(buf, "option rate.fake-a"));
	assert_null(strstr(buf, "option ca_file"));
	assert_null(strstr(buf, "option state_dir"));
	assert_null(strstr(buf, "option init_timeout_ms"));
	/* the host's own options are listed, the loader's deadline too */
	assert_non_null(strstr(buf, "backoff_cap_ms, init_timeout_ms"));
	gb_kvs_free(&opts);
	gb_drv_close(drv);
}

/* ---- the ELF check before dlopen ---- */

static char tmpdir[512];

static void make_tmpdir(void)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof(tmpdir), "%s/gbloader.XXXXXX",
	         t && *t ? t : "/tmp");
	assert_non_null(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	assert_int_equal(system(cmd), 0);
}

/* Writes n bytes of data to tmpdir/name; returns the path (static). */
static const char *write_tmp(const char *name, const void *data, size_t n)
{
	static char p[600];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
	f = fopen(p, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(data, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
	return p;
}

/* gb_drv_open refuses p with a message naming it and saying why. */
static void refused_file(const char *p, const char *reason)
{
	gb_drv *drv = (gb_drv *)1;
	char err[600] = "";
	assert_int_equal(gb_drv_open(p, "fake", &drv, err, sizeof(err)), -1);
	assert_null(drv);
	if (!strstr(err, p))
		fail_msg("error does not name the file %s: %s", p, err);
	if (!strstr(err, reason))
		fail_msg("error lacks \"%s\": %s", reason, err);
}

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr t_ehdr;
typedef Elf64_Phdr t_phdr;
#else
typedef Elf32_Ehdr t_ehdr;
typedef Elf32_Phdr t_phdr;
#endif

/* A good driver file, and copies of it broken in one way each. */
static void test_elf_check_refusals(void **state)
{
	char *img, err[600];
	size_t len;
	t_ehdr eh, bad;
	uint64_t load_end = 0;
	gb_drv *drv = NULL;
	char *copy;
	struct stat st;
	static const char garbage[] = "#!/bin/sh\necho this is not a driver\n";
	(void)state;
	make_tmpdir();
	assert_int_equal(gb_read_file(fake("fake_good"), 64 << 20, &img, &len),
	                 0);
	assert_true(len > sizeof(eh));
	memcpy(&eh, img, sizeof(eh));
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		t_phdr ph;
		memcpy(&ph, img + eh.e_phoff + (size_t)i * sizeof(ph), sizeof(ph));
		if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > load_end)
			load_end = ph.p_offset + ph.p_filesz;
	}
	assert_true(load_end > 4096 && load_end <= len);
	/* the section headers come after the segments in what ld makes */
	assert_true(eh.e_shoff >= load_end);

	/* control: an unbroken copy loads */
	copy = gb_xstrdup(write_tmp("good.so", img, len));
	assert_int_equal(gb_drv_open(copy, "fake", &drv, err, sizeof(err)), 0);
	gb_drv_close(drv);
	free(copy);

	refused_file(write_tmp("empty.so", "", 0), "cannot load: the file is "
	             "empty (0 bytes), not an ELF shared object");
	refused_file(write_tmp("short.so", "\177EL", 3), "the file is too "
	             "short (3 bytes)");
	refused_file(write_tmp("garbage.so", garbage, sizeof(garbage) - 1),
	             "cannot load: not an ELF file (it does not start with "
	             "\\177ELF");
	refused_file(write_tmp("header.so", img, 40), "truncated: the file has "
	             "40 bytes, fewer than the");
	/* truncated: inside the last loadable segment (the SIGBUS case), in
	 * the program header table, in the section header table */
	refused_file(write_tmp("trunc.so", img, load_end - 1),
	             "truncated: the loadable segment of program header");
	refused_file(write_tmp("trunc_ph.so", img,
	                       eh.e_phoff + sizeof(t_phdr)),
	             "truncated: the program header table ends at byte");
	refused_file(write_tmp("trunc_sh.so", img, eh.e_shoff + 1),
	             "truncated: the section header table ends at byte");

	bad = eh;
	bad.e_ident[EI_CLASS] = bad.e_ident[EI_CLASS] == ELFCLASS64 ? ELFCLASS32
	                                                            : ELFCLASS64;
	memcpy(img, &bad, sizeof(bad));
	refused_file(write_tmp("class.so", img, len),
	             bad.e_ident[EI_CLASS] == ELFCLASS32
	                     ? "a 32-bit ELF file, but this gpubroker is 64-bit"
	                     : "a 64-bit ELF file, but this gpubroker is 32-bit");
	bad = eh;
	bad.e_ident[EI_DATA] = bad.e_ident[EI_DATA] == ELFDATA2LSB ? ELFDATA2MSB
	                                                           : ELFDATA2LSB;
	memcpy(img, &bad, sizeof(bad));
	refused_file(write_tmp("endian.so", img, len), "-endian ELF file, but "
	             "this machine is");
	bad = eh;
	bad.e_machine = eh.e_machine == EM_AARCH64 ? EM_X86_64 : EM_AARCH64;
	memcpy(img, &bad, sizeof(bad));
	refused_file(write_tmp("machine.so", img, len),
	             eh.e_machine == EM_AARCH64
	                     ? "built for x86-64 (machine 62), but this "
	                       "gpubroker runs on AArch64 (machine 183)"
	                     : "built for AArch64 (machine 183), but this "
	                       "gpubroker runs on");
	bad = eh;
	bad.e_type = ET_EXEC;
	memcpy(img, &bad, sizeof(bad));
	refused_file(write_tmp("exec.so", img, len), "not a shared object (the "
	             "ELF file is an executable): build the driver with "
	             "-shared");
	bad.e_type = ET_REL;
	memcpy(img, &bad, sizeof(bad));
	refused_file(write_tmp("obj.so", img, len), "a relocatable object");
	memcpy(img, &eh, sizeof(eh));

	/* not a regular file */
	refused_file(tmpdir, "not a regular file (a directory)");
	assert_int_equal(stat("/dev/null", &st), 0);
	refused_file("/dev/null", "not a regular file (a device");
	free(img);
	remove_tmpdir();
}

/* As sshd's StrictModes: the file and every folder above it (symlinks
 * resolved) owned by root or this user, writable by no one else (a
 * folder with the sticky bit excepted); a file that exports no
 * gb_driver_entry is refused before its constructor could run. */
static void copy_to(const char *from, const char *to, mode_t mode)
{
	char *img;
	size_t len;
	FILE *f;
	assert_int_equal(gb_read_file(from, 64 << 20, &img, &len), 0);
	f = fopen(to, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(img, 1, len, f), len);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(chmod(to, mode), 0);
	free(img);
}

static void loads(const char *p)
{
	gb_drv *drv = NULL;
	char err[600] = "";
	if (gb_drv_open(p, "fake", &drv, err, sizeof(err)) != 0)
		fail_msg("%s: expected to load: %s", p, err);
	gb_drv_close(drv);
}

static void test_strict_modes(void **state)
{
	char good[700], sub[700], inner[800], link[700], stray[700];
	char marker[700];
	(void)state;
	make_tmpdir();
	assert_int_equal(chmod(tmpdir, 0700), 0);
	snprintf(good, sizeof(good), "%s/good.so", tmpdir);
	copy_to(fake("fake_good"), good, 0644);
	loads(good);
	assert_int_equal(chmod(good, 0666), 0);
	refused_file(good, "is writable by everyone (mode 0666), who could "
	             "replace the driver: chmod go-w");
	assert_int_equal(chmod(good, 0664), 0);
	refused_file(good, "writable by its group (mode 0664)");
	assert_int_equal(chmod(good, 0755), 0);
	/* a folder above it */
	assert_int_equal(chmod(tmpdir, 0777), 0);
	refused_file(good, "the folder");
	refused_file(good, "writable by everyone (mode 0777)");
	assert_int_equal(chmod(tmpdir, 01777), 0); /* sticky, as /tmp */
	loads(good);
	assert_int_equal(chmod(tmpdir, 0700), 0);
	/* through a symlink: the real place is checked */
	snprintf(sub, sizeof(sub), "%s/loose", tmpdir);
	assert_int_equal(mkdir(sub, 0700), 0);
	snprintf(inner, sizeof(inner), "%s/x.so", sub);
	copy_to(fake("fake_good"), inner, 0755);
	snprintf(link, sizeof(link), "%s/link.so", tmpdir);
	assert_int_equal(symlink(inner, link), 0);
	loads(link);
	assert_int_equal(chmod(sub, 0770), 0);
	refused_file(link, "loose is writable by its group");
	assert_int_equal(chmod(sub, 0700), 0);
	if (geteuid() == 0) {
		assert_int_equal(chown(inner, 12345, 12345), 0);
		refused_file(link, "is owned by uid 12345, neither root nor "
		             "this user");
		assert_int_equal(chown(sub, 12345, 12345), 0);
		assert_int_equal(chown(inner, 0, 0), 0);
		refused_file(link, "the folder");
	}
	/* no entry: refused from its symbol table, its constructor unrun */
	snprintf(stray, sizeof(stray), "%s/stray.so", tmpdir);
	snprintf(marker, sizeof(marker), "%s/ctor-ran", tmpdir);
	copy_to(fake("fake_stray_ctor"), stray, 0755);
	setenv("GB_FAKE_CTOR_MARKER", marker, 1);
	refused_file(stray, "not a gpubroker driver: it does not export "
	             "gb_driver_entry() (found in its symbol table before "
	             "loading");
	unsetenv("GB_FAKE_CTOR_MARKER");
	assert_int_not_equal(access(marker, F_OK), 0);
	remove_tmpdir();
}

/* ---- logging each driver before its code runs ---- */

static FILE *capture_start(gb_log_level *saved)
{
	FILE *f = tmpfile();
	assert_non_null(f);
	*saved = gb_log_get_level();
	gb_log_set_level(GB_LOG_INFO);
	gb_log_set_file(f);
	return f;
}

/* Stops capturing; returns what was logged (caller frees). */
static char *capture_end(FILE *f, gb_log_level saved)
{
	char *buf = calloc(1, 65536);
	size_t n;
	assert_non_null(buf);
	gb_log_set_file(NULL);
	gb_log_set_level(saved);
	rewind(f);
	n = fread(buf, 1, 65535, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static size_t count(const char *hay, const char *needle)
{
	size_t n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

static void test_each_driver_logged_before_loading(void **state)
{
	gb_log_level lvl;
	FILE *f;
	char *log, want[700], err[600];
	gb_drv *drv = NULL;
	gb_kvs opts = {0};
	(void)state;
	f = capture_start(&lvl);
	assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	gb_drv_close(drv);
	/* refused by the ELF check: still named first */
	assert_int_equal(gb_drv_open("/nonexistent/x.so", NULL, &drv, err,
	                             sizeof(err)), -1);
	log = capture_end(f, lvl);
	snprintf(want, sizeof(want), "info  drivers: loading driver fake from "
	         "%s\n", fake("fake_good"));
	assert_non_null(strstr(log, want));
	assert_non_null(strstr(log, "info  drivers: initialising driver fake\n"));
	assert_true(strstr(log, want) <
	            strstr(log, "initialising driver fake"));
	assert_non_null(strstr(log, "loading driver x from /nonexistent/x.so"));
	free(log);
}

/* ---- init's deadline ---- */

/* Waits (polling, up to 20 s) until only `base` abandoned inits run
 * (those of hanging drivers other tests left behind). */
static void wait_abandoned_done(size_t base)
{
	int64_t until = gb_mono_ms() + 20000;
	while (gb_drv_abandoned_inits() > base && gb_mono_ms() < until)
		gb_sleep_ms(5);
	assert_int_equal(gb_drv_abandoned_inits(), base);
}

/* Opens fake_init_slow and inits it with sleep_ms and a deadline;
 * returns gb_drv_init's result and how long it took. */
/* "1": the fake sleeps with nanosleep, which no deadline cuts. */
static const char *slow_plain;

static int slow_init(gb_drv **drv, const char *sleep_ms, const char *fail,
                     const char *deadline, char *err, size_t cap,
                     int64_t *took)
{
	gb_kvs opts = {0};
	int rc;
	int64_t t0;
	assert_int_equal(gb_drv_open(fake("fake_init_slow"), "init_slow", drv,
	                             err, cap), 0);
	gb_kvs_set(&opts, "sleep_ms", sleep_ms);
	if (fail)
		gb_kvs_set(&opts, "fail", fail);
	if (deadline)
		gb_kvs_set(&opts, "init_timeout_ms", deadline);
	if (slow_plain)
		gb_kvs_set(&opts, "plain", slow_plain);
	t0 = gb_mono_ms();
	rc = gb_drv_init(*drv, &opts, err, cap);
	*took = gb_mono_ms() - t0;
	gb_kvs_free(&opts);
	return rc;
}

/* Past the deadline the driver is refused at once, naming it and the
 * deadline; the init that returns later (success) gets fini exactly once
 * from its own thread, whether the driver was closed before (the thread
 * frees it) or after. */
static void test_init_deadline_refuses(void **state)
{
	(void)state;
	/* control: within its deadline it is ready, with fini once */
	{
		gb_drv *drv = NULL;
		char err[600], *log;
		int64_t took;
		gb_log_level lvl;
		FILE *f = capture_start(&lvl);
		assert_int_equal(slow_init(&drv, "20", NULL, "10000", err,
		                           sizeof(err), &took), 0);
		assert_true(drv->ready);
		assert_string_equal(drv->status, "ready");
		assert_null(drv->job);
		gb_drv_close(drv);
		log = capture_end(f, lvl);
		assert_int_equal(count(log, "init_slow: fini"), 1);
		free(log);
	}
	for (int close_first = 0; close_first < 2; close_first++) {
		gb_drv *drv = NULL;
		char err[600] = "", *log;
		int64_t took;
		gb_log_level lvl;
		size_t base = gb_drv_abandoned_inits();
		FILE *f = capture_start(&lvl);
		assert_int_equal(slow_init(&drv, "1500", NULL, "100", err,
		                           sizeof(err), &took), -1);
		if (!strstr(err, "driver 'init_slow': init did not return "
		                 "within 100 ms; it is left running") ||
		    !strstr(err, "raise the driver's init_timeout_ms option"))
			fail_msg("unexpected error: %s", err);
		/* waited for the deadline, not for init */
		if (took < 90 || took >= 1200)
			fail_msg("gb_drv_init took %lld ms", (long long)took);
		assert_false(drv->ready);
		assert_null(drv->ctx);
		assert_string_equal(drv->status, err);
		assert_int_equal(gb_drv_abandoned_inits(), base + 1);
		if (close_first) {
			gb_drv_close(drv); /* the thread frees it */
			wait_abandoned_done(base);
		} else {
			wait_abandoned_done(base);
			gb_drv_close(drv);
		}
		log = capture_end(f, lvl);
		assert_int_equal(count(log, "init_slow: fini"), 1);
		assert_non_null(strstr(log, "driver 'init_slow': init returned "
		                            "(success: calling its fini) after "
		                            "its 100 ms deadline"));
		free(log);
	}
}

/* A late failure: no fini (init made nothing). */
static void test_init_deadline_late_failure(void **state)
{
	gb_drv *drv = NULL;
	char err[600] = "", *log;
	int64_t took;
	gb_log_level lvl;
	size_t base = gb_drv_abandoned_inits();
	FILE *f;
	(void)state;
	f = capture_start(&lvl);
	/* The host's sleep would be cut at the same 50 ms the waiter gives
	 * up at, and which side saw it first decided the message: a plain
	 * sleep of 1 s surely outlives the deadline. */
	slow_plain = "1";
	assert_int_equal(slow_init(&drv, "1000", "1", "50", err, sizeof(err),
	                           &took), -1);
	slow_plain = NULL;
	assert_non_null(strstr(err, "init did not return within 50 ms"));
	assert_int_equal(gb_drv_abandoned_inits(), base + 1);
	gb_drv_close(drv);
	wait_abandoned_done(base);
	log = capture_end(f, lvl);
	assert_int_equal(count(log, "init_slow: fini"), 0);
	assert_non_null(strstr(log, "init returned (failure) after its 50 ms "
	                            "deadline"));
	free(log);
}

/* Loading a config with a broken driver keeps going: the others load,
 * the broken one is listed with its reason. */
static void test_load_list_keeps_going(void **state)
{
	gb_config cfg;
	gb_drivers ds;
	char good[512], bad[512];
	(void)state;
	snprintf(good, sizeof(good), "%s", fake("fake_good"));
	snprintf(bad, sizeof(bad), "%s", fake("fake_bad_major"));
	memset(&cfg, 0, sizeof(cfg));
	cfg.ndrivers = 2;
	cfg.drivers = calloc(2, sizeof(gb_driver_cfg));
	cfg.drivers[0].name = (char *)"fake";
	cfg.drivers[0].path = good;
	cfg.drivers[1].name = (char *)"future";
	cfg.drivers[1].path = bad;
	assert_int_equal(gb_drivers_load(&ds, &cfg), 1);
	assert_int_equal(ds.n, 2);
	assert_true(gb_drivers_find(&ds, "fake")->ready);
	assert_false(gb_drivers_find(&ds, "future")->ready);
	assert_non_null(strstr(gb_drivers_find(&ds, "future")->status,
	                       "does not match the host's"));
	gb_drivers_free(&ds);
	free(cfg.drivers);
}

/* A config with a truncated driver and one whose init never returns
 * (init_timeout_ms 200): both are listed with their reasons, the good
 * one is ready, and loading does not wait for the hanging init. */
static void test_load_list_bad_files(void **state)
{
	gb_config cfg;
	gb_drivers ds;
	char good[512], hang[512], trunc[600], *img;
	size_t len;
	int64_t t0, took;
	(void)state;
	make_tmpdir();
	snprintf(good, sizeof(good), "%s", fake("fake_good"));
	snprintf(hang, sizeof(hang), "%s", fake("fake_init_hang"));
	assert_int_equal(gb_read_file(good, 64 << 20, &img, &len), 0);
	snprintf(trunc, sizeof(trunc), "%s", write_tmp("trunc.so", img,
	                                               len / 2));
	free(img);
	memset(&cfg, 0, sizeof(cfg));
	cfg.ndrivers = 3;
	cfg.drivers = calloc(3, sizeof(gb_driver_cfg));
	cfg.drivers[0].name = (char *)"cut";
	cfg.drivers[0].path = trunc;
	cfg.drivers[1].name = (char *)"init_hang";
	cfg.drivers[1].path = hang;
	gb_kvs_set(&cfg.drivers[1].options, "init_timeout_ms", "200");
	cfg.drivers[2].name = (char *)"fake";
	cfg.drivers[2].path = good;
	t0 = gb_mono_ms();
	assert_int_equal(gb_drivers_load(&ds, &cfg), 1);
	took = gb_mono_ms() - t0;
	if (took >= 5000)
		fail_msg("loading took %lld ms", (long long)took);
	assert_int_equal(ds.n, 3);
	assert_true(gb_drivers_find(&ds, "fake")->ready);
	assert_false(gb_drivers_find(&ds, "cut")->ready);
	assert_non_null(strstr(gb_drivers_find(&ds, "cut")->status,
	                       ": cannot load: truncated:"));
	assert_false(gb_drivers_find(&ds, "init_hang")->ready);
	assert_non_null(strstr(gb_drivers_find(&ds, "init_hang")->status,
	                       "init did not return within 200 ms"));
	/* the hanging init keeps its gb_drv: freeing the list must not */
	gb_drivers_free(&ds);
	gb_kvs_free(&cfg.drivers[1].options);
	free(cfg.drivers);
	remove_tmpdir();
}


/* An offer whose GPU model is not canonical is kept but named in a
 * warning (no spec could ask for it); an alias becomes its canonical
 * name; a malformed offer is skipped with a warning, never silently. */
static void test_offer_models_warned(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	gb_kvs opts = {0};
	gb_drivers ds;
	gb_catalog *cat = gb_catalog_new();
	gb_strv problems = {0};
	int unknown = 0, malformed = 0, alias = 0;
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_odd_offers"), "odd", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	ds.v = &drv;
	ds.n = 1;
	assert_int_equal(gb_drivers_offers(&ds, cat, &problems), 3);
	for (size_t i = 0; i < problems.n; i++) {
		if (strstr(problems.v[i], "offer odd.h100x has GPU model "
		                          "\"H100X\", which is not a canonical "
		                          "name") &&
		    strstr(problems.v[i], "one of B200, H200"))
			unknown++;
		if (strstr(problems.v[i], "odd: 1 offer skipped as malformed "
		                          "(first: odd.free in odd-1)"))
			malformed++;
	}
	assert_int_equal(problems.n, 2);
	assert_int_equal(unknown, 1);
	assert_int_equal(malformed, 1);
	for (size_t i = 0; i < gb_catalog_count(cat); i++) {
		const gb_coffer *o = gb_catalog_at(cat, i);
		if (strcmp(o->instance_type, "odd.sxm") == 0) {
			assert_string_equal(o->gpu_model, "H100");
			alias++;
		}
	}
	assert_int_equal(alias, 1);
	gb_strv_free(&problems);
	gb_catalog_free(cat);
	gb_drv_close(drv);
}

/* host->cancelled (minor 5): the stop flag and the thread's deadline;
 * the host's sleep ends early once cancelled. */
static void test_host_cancelled(void **state)
{
	gb_drv *drv = NULL;
	char err[600];
	gb_kvs opts = {0};
	volatile sig_atomic_t stop = 0;
	int64_t t0;
	(void)state;
	assert_int_equal(gb_drv_open(fake("fake_good"), "fake", &drv, err,
	                             sizeof(err)), 0);
	assert_int_equal(gb_drv_init(drv, &opts, err, sizeof(err)), 0);
	assert_true(drv->host.abi_minor >= 5);
	assert_non_null(drv->host.cancelled);
	assert_int_equal(drv->host.cancelled(drv->host.ctx), 0);
	assert_int_equal(gb_cancel_deadline(gb_mono_ms() - 1), 0);
	assert_int_equal(drv->host.cancelled(drv->host.ctx), 1);
	t0 = gb_mono_ms();
	drv->host.sleep_ms(drv->host.ctx, 5000);
	assert_true(gb_mono_ms() - t0 < 1000);
	gb_cancel_deadline(0);
	assert_int_equal(drv->host.cancelled(drv->host.ctx), 0);
	gb_cancel_set_stop(&stop);
	assert_int_equal(drv->host.cancelled(drv->host.ctx), 0);
	stop = 1;
	assert_int_equal(drv->host.cancelled(drv->host.ctx), 1);
	assert_int_equal(gb_cancel_sleep_ms(5000), 1);
	gb_cancel_clear_stop(&stop);
	assert_int_equal(drv->host.cancelled(drv->host.ctx), 0);
	t0 = gb_mono_ms();
	assert_int_equal(gb_cancel_sleep_ms(30), 0);
	assert_true(gb_mono_ms() - t0 >= 30);
	gb_drv_close(drv);
}

/* host->secret never hands out a truncated secret: -2, buf "". */
static void test_secret_does_not_fit(void **state)
{
	char buf[16] = "xxxx";
	(void)state;
	setenv("GB_TEST_SECRET_LEN", "abcdefgh", 1);
	assert_int_equal(gb_secret_lookup("env:GB_TEST_SECRET_LEN", buf, 8), -2);
	assert_string_equal(buf, "");
	assert_int_equal(gb_secret_lookup("env:GB_TEST_SECRET_LEN", buf, 9), 8);
	assert_string_equal(buf, "abcdefgh");
	assert_int_equal(gb_secret_lookup("env:GB_TEST_NO_SUCH_VAR", buf, 9), -1);
	unsetenv("GB_TEST_SECRET_LEN");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_not_a_driver),
		cmocka_unit_test(test_refuses_host),
		cmocka_unit_test(test_abi_major_mismatch),
		cmocka_unit_test(test_short_descriptor),
		cmocka_unit_test(test_null_mandatory),
		cmocka_unit_test(test_wrong_name),
		cmocka_unit_test(test_good_driver),
		cmocka_unit_test(test_old_minor_optional_not_called),
		cmocka_unit_test(test_old_minor_offer_available),
		cmocka_unit_test(test_billing_minimum),
		cmocka_unit_test(test_init_failure_kept_with_status),
		cmocka_unit_test(test_bad_transport_options),
		cmocka_unit_test(test_default_rates),
		cmocka_unit_test(test_unknown_option_warned),
		cmocka_unit_test(test_load_list_keeps_going),
		cmocka_unit_test(test_elf_check_refusals),
		cmocka_unit_test(test_each_driver_logged_before_loading),
		cmocka_unit_test(test_init_deadline_refuses),
		cmocka_unit_test(test_init_deadline_late_failure),
		cmocka_unit_test(test_load_list_bad_files),
		cmocka_unit_test(test_offer_models_warned),
		cmocka_unit_test(test_host_cancelled),
		cmocka_unit_test(test_secret_does_not_fit),
		cmocka_unit_test(test_strict_modes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
