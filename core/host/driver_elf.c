/* driver_elf.c -- is a driver file a complete ELF shared object for this
 * machine?  Checked before dlopen: dlopen maps the segments the program
 * headers promise, and touching a page past the end of a truncated file
 * kills the process with SIGBUS. */
#include "driver_int.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "gpubroker/driver.h"
#include "util.h"

#if UINTPTR_MAX > 0xffffffffu
typedef Elf64_Ehdr elf_ehdr;
typedef Elf64_Phdr elf_phdr;
typedef Elf64_Shdr elf_shdr;
typedef Elf64_Sym elf_sym;
#define HOST_CLASS ELFCLASS64
#define HOST_BITS "64-bit"
#else
typedef Elf32_Ehdr elf_ehdr;
typedef Elf32_Phdr elf_phdr;
typedef Elf32_Shdr elf_shdr;
typedef Elf32_Sym elf_sym;
#define HOST_CLASS ELFCLASS32
#define HOST_BITS "32-bit"
#endif

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define HOST_DATA ELFDATA2LSB
#else
#define HOST_DATA ELFDATA2MSB
#endif

/* The e_machine this build runs on; an architecture missing here skips
 * that one check (dlopen still refuses, with a less helpful message). */
#if defined(__x86_64__)
#define HOST_MACHINE EM_X86_64
#elif defined(__i386__)
#define HOST_MACHINE EM_386
#elif defined(__aarch64__)
#define HOST_MACHINE EM_AARCH64
#elif defined(__arm__)
#define HOST_MACHINE EM_ARM
#elif defined(__powerpc64__)
#define HOST_MACHINE EM_PPC64
#elif defined(__powerpc__)
#define HOST_MACHINE EM_PPC
#elif defined(__s390x__) || defined(__s390__)
#define HOST_MACHINE EM_S390
#elif defined(__riscv)
#define HOST_MACHINE EM_RISCV
#elif defined(__mips__)
#define HOST_MACHINE EM_MIPS
#elif defined(__loongarch__) && defined(EM_LOONGARCH)
#define HOST_MACHINE EM_LOONGARCH
#endif

static const char *machine_name(unsigned m, char *buf, size_t cap)
{
	static const struct {
		unsigned m;
		const char *name;
	} names[] = {
		{EM_X86_64, "x86-64"},   {EM_386, "x86 (32-bit)"},
		{EM_AARCH64, "AArch64"}, {EM_ARM, "ARM (32-bit)"},
		{EM_PPC64, "POWER64"},   {EM_PPC, "PowerPC (32-bit)"},
		{EM_S390, "s390x"},      {EM_RISCV, "RISC-V"},
		{EM_MIPS, "MIPS"},       {EM_SPARCV9, "SPARC64"},
	};
	for (size_t i = 0; i < GB_ARRAY_LEN(names); i++)
		if (names[i].m == m) {
			snprintf(buf, cap, "%s (machine %u)", names[i].name, m);
			return buf;
		}
	snprintf(buf, cap, "machine %u", m);
	return buf;
}

static const char *type_name(unsigned t)
{
	switch (t) {
	case ET_NONE: return "no file type";
	case ET_REL: return "a relocatable object, a .o";
	case ET_EXEC: return "an executable";
	case ET_CORE: return "a core dump";
	default: return "an unknown ELF file type";
	}
}

/* Reads exactly n bytes at off; 0, or -1 (errno set; EIO at the end). */
static int read_at(int fd, void *buf, size_t n, uint64_t off)
{
	char *p = buf;
	while (n > 0) {
		ssize_t r = pread(fd, p, n, (off_t)off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			if (r == 0)
				errno = EIO;
			return -1;
		}
		p += r;
		n -= (size_t)r;
		off += (uint64_t)r;
	}
	return 0;
}

/* Does [off, off + count * size) lie within size bytes?  *end = where it
 * ends (UINT64_MAX on overflow). */
static int within(uint64_t off, uint64_t count, uint64_t size,
                  uint64_t file_size, uint64_t *end)
{
	if (size && count > (UINT64_MAX - off) / size) {
		*end = UINT64_MAX;
		return 0;
	}
	*end = off + count * size;
	return *end <= file_size;
}

#define REINSTALL "reinstall the driver (this copy is incomplete or damaged)"

/* Largest symbol or string table read (a driver's are kilobytes). */
#define MAX_TABLE ((uint64_t)64 << 20)

/* Reads section sh of the file (checked to lie inside it) into a new
 * buffer; caller frees.  NULL when it does not fit. */
static void *read_section(int fd, const elf_shdr *sh, uint64_t size)
{
	uint64_t end;
	void *buf;
	if (sh->sh_size == 0 || sh->sh_size > MAX_TABLE ||
	    !within(sh->sh_offset, 1, sh->sh_size, size, &end))
		return NULL;
	buf = gb_xmalloc((size_t)sh->sh_size);
	if (read_at(fd, buf, (size_t)sh->sh_size, sh->sh_offset) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* Does the dynamic symbol table define GB_DRIVER_ENTRY_NAME as a
 * function?  1 yes, 0 no, -1 it cannot be told (no section headers).
 * Read, never mapped or run: a file that is no driver is refused
 * before its constructors could run. */
static int exports_entry(int fd, const elf_ehdr *eh, uint64_t size)
{
	elf_shdr *sh;
	uint64_t n = eh->e_shnum, end;
	int found = 0;

	if (!eh->e_shoff || eh->e_shentsize != sizeof(elf_shdr))
		return -1;
	if (n == 0) { /* the count is in the first header */
		elf_shdr first;
		if (read_at(fd, &first, sizeof(first), eh->e_shoff) != 0)
			return -1;
		n = first.sh_size;
	}
	if (n == 0 || n > 65536 ||
	    !within(eh->e_shoff, n, sizeof(elf_shdr), size, &end))
		return -1;
	sh = gb_xmalloc((size_t)n * sizeof(*sh));
	if (read_at(fd, sh, (size_t)n * sizeof(*sh), eh->e_shoff) != 0) {
		free(sh);
		return -1;
	}
	for (uint64_t i = 0; i < n && !found; i++) {
		elf_sym *sym;
		char *str;
		uint64_t nsym;
		if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= n ||
		    sh[i].sh_entsize != sizeof(elf_sym))
			continue;
		sym = read_section(fd, &sh[i], size);
		str = read_section(fd, &sh[sh[i].sh_link], size);
		nsym = sym && str ? sh[i].sh_size / sizeof(elf_sym) : 0;
		for (uint64_t k = 0; k < nsym; k++) {
			uint64_t at = sym[k].st_name;
			uint64_t len = sizeof(GB_DRIVER_ENTRY_NAME);
			if (sym[k].st_shndx == SHN_UNDEF ||
			    (sym[k].st_info & 0xf) != STT_FUNC ||
			    at >= sh[sh[i].sh_link].sh_size ||
			    sh[sh[i].sh_link].sh_size - at < len)
				continue;
			if (memcmp(str + at, GB_DRIVER_ENTRY_NAME, len) == 0) {
				found = 1;
				break;
			}
		}
		free(sym);
		free(str);
	}
	free(sh);
	return found;
}

static int check_fd(int fd, const char *path, char *err, size_t cap)
{
	struct stat st;
	elf_ehdr eh;
	unsigned char *ph;
	uint64_t size, end, shn;
	char a[64], b[64];

	if (fstat(fd, &st) != 0) {
		snprintf(err, cap, "%s: cannot load: cannot examine the file: %s",
		         path, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, cap, "%s: cannot load: not a regular file (%s); a "
		         "driver is a shared object file (NAME.so): check the "
		         "driver's path in the config", path,
		         S_ISDIR(st.st_mode) ? "a directory" : "a device, FIFO "
		         "or socket");
		return -1;
	}
	size = (uint64_t)st.st_size;
	if (size < SELFMAG) {
		snprintf(err, cap, "%s: cannot load: the file is %s (%llu "
		         "bytes), not an ELF shared object: %s", path,
		         size ? "too short" : "empty", (unsigned long long)size,
		         REINSTALL);
		return -1;
	}
	memset(&eh, 0, sizeof(eh));
	if (read_at(fd, &eh, size < sizeof(eh) ? (size_t)size : sizeof(eh),
	            0) != 0) {
		snprintf(err, cap, "%s: cannot load: cannot read the file: %s",
		         path, strerror(errno));
		return -1;
	}
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) {
		snprintf(err, cap, "%s: cannot load: not an ELF file (it does "
		         "not start with \\177ELF; a script, a text file or an "
		         "archive?): a driver is a shared object built with "
		         "-shared", path);
		return -1;
	}
	if (size < sizeof(eh)) {
		snprintf(err, cap, "%s: cannot load: truncated: the file has "
		         "%llu bytes, fewer than the %zu of an ELF header: %s",
		         path, (unsigned long long)size, sizeof(eh), REINSTALL);
		return -1;
	}
	if (eh.e_ident[EI_CLASS] != HOST_CLASS) {
		const char *c = eh.e_ident[EI_CLASS] == ELFCLASS32 ? "32-bit"
		              : eh.e_ident[EI_CLASS] == ELFCLASS64 ? "64-bit"
		                                                   : NULL;
		if (c)
			snprintf(err, cap, "%s: cannot load: a %s ELF file, but "
			         "this gpubroker is " HOST_BITS ": install the "
			         "driver built for this machine", path, c);
		else
			snprintf(err, cap, "%s: cannot load: invalid ELF class "
			         "%u: %s", path, eh.e_ident[EI_CLASS], REINSTALL);
		return -1;
	}
	if (eh.e_ident[EI_DATA] != HOST_DATA) {
		unsigned char v = eh.e_ident[EI_DATA];
		const char *d = v == ELFDATA2LSB ? "little-endian"
		              : v == ELFDATA2MSB ? "big-endian" : NULL;
		if (d)
			snprintf(err, cap, "%s: cannot load: a %s ELF file, but "
			         "this machine is %s: install the driver built "
			         "for this machine", path, d,
			         HOST_DATA == ELFDATA2LSB ? "little-endian"
			                                  : "big-endian");
		else
			snprintf(err, cap, "%s: cannot load: invalid ELF data "
			         "encoding %u: %s", path, eh.e_ident[EI_DATA],
			         REINSTALL);
		return -1;
	}
	if (eh.e_ident[EI_VERSION] != EV_CURRENT || eh.e_version != EV_CURRENT) {
		snprintf(err, cap, "%s: cannot load: unknown ELF version %u: %s",
		         path, eh.e_ident[EI_VERSION] != EV_CURRENT
		                   ? (unsigned)eh.e_ident[EI_VERSION]
		                   : (unsigned)eh.e_version, REINSTALL);
		return -1;
	}
#ifdef HOST_MACHINE
	if (eh.e_machine != HOST_MACHINE) {
		snprintf(err, cap, "%s: cannot load: built for %s, but this "
		         "gpubroker runs on %s: install the driver built for "
		         "this machine", path, machine_name(eh.e_machine, a,
		         sizeof(a)), machine_name(HOST_MACHINE, b, sizeof(b)));
		return -1;
	}
#else
	(void)a;
	(void)b;
	(void)machine_name;
#endif
	if (eh.e_type != ET_DYN) {
		snprintf(err, cap, "%s: cannot load: not a shared object (the "
		         "ELF file is %s): build the driver with -shared -fPIC",
		         path, type_name(eh.e_type));
		return -1;
	}
	if (eh.e_phnum == 0 || eh.e_phentsize != sizeof(elf_phdr)) {
		snprintf(err, cap, "%s: cannot load: %s: %s", path,
		         eh.e_phnum == 0 ? "no program headers"
		                         : "program headers of an unexpected size",
		         REINSTALL);
		return -1;
	}
	if (!within(eh.e_phoff, eh.e_phnum, eh.e_phentsize, size, &end)) {
		snprintf(err, cap, "%s: cannot load: truncated: the program "
		         "header table ends at byte %llu but the file has %llu "
		         "bytes: %s", path, (unsigned long long)end,
		         (unsigned long long)size, REINSTALL);
		return -1;
	}
	ph = gb_xmalloc((size_t)eh.e_phnum * sizeof(elf_phdr));
	if (read_at(fd, ph, (size_t)eh.e_phnum * sizeof(elf_phdr),
	            eh.e_phoff) != 0) {
		snprintf(err, cap, "%s: cannot load: cannot read the program "
		         "headers: %s", path, strerror(errno));
		free(ph);
		return -1;
	}
	for (unsigned i = 0; i < eh.e_phnum; i++) {
		elf_phdr p;
		memcpy(&p, ph + (size_t)i * sizeof(p), sizeof(p));
		/* a segment with nothing from the file (p_filesz 0) is
		 * zero-filled memory: no page of the file is touched */
		if (p.p_type != PT_LOAD || p.p_filesz == 0 ||
		    within(p.p_offset, 1, p.p_filesz, size, &end))
			continue;
		snprintf(err, cap, "%s: cannot load: truncated: the loadable "
		         "segment of program header %u ends at byte %llu but "
		         "the file has %llu bytes: %s", path, i,
		         (unsigned long long)end, (unsigned long long)size,
		         REINSTALL);
		free(ph);
		return -1;
	}
	free(ph);
	/* e_shnum 0 with e_shoff set: the count is in the first header */
	shn = eh.e_shnum ? eh.e_shnum : 1;
	if (eh.e_shoff && !within(eh.e_shoff, shn, eh.e_shentsize, size,
	                          &end)) {
		snprintf(err, cap, "%s: cannot load: truncated: the section "
		         "header table ends at byte %llu but the file has %llu "
		         "bytes: %s", path, (unsigned long long)end,
		         (unsigned long long)size, REINSTALL);
		return -1;
	}
	switch (exports_entry(fd, &eh, size)) {
	case 1:
		return 0;
	case 0:
		snprintf(err, cap, "%s: not a gpubroker driver: it does not "
		         "export " GB_DRIVER_ENTRY_NAME "() (found in its "
		         "symbol table before loading: none of its code ran)",
		         path);
		return -1;
	default:
		snprintf(err, cap, "%s: cannot load: no section headers, so "
		         "it cannot be checked for " GB_DRIVER_ENTRY_NAME "() "
		         "before loading: build the driver with -shared (strip "
		         "keeps what is needed)", path);
		return -1;
	}
}

int gb_drv_check_elf(const char *path, char *err, size_t cap)
{
	int rc, fd;
	/* O_NONBLOCK: a FIFO in the driver's place must not hang us here */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		snprintf(err, cap, "%s: cannot load: cannot open the file: %s: "
		         "check the driver's path in the config (drivers: "
		         "path:) or install the driver", path, strerror(errno));
		return -1;
	}
	rc = check_fd(fd, path, err, cap);
	close(fd);
	return rc;
}
