// probe_options.cpp -- gpuprobe's command line and --config file.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "probe.h"

const ThrSpec kThr[T_COUNT] = {
	{"min_d2d_gbps", "--min-d2d-gbps", "d2d bandwidth (read+write)", "GB/s", false},
	{"min_h2d_gbps", "--min-h2d-gbps", "h2d bandwidth", "GB/s", false},
	{"min_d2h_gbps", "--min-d2h-gbps", "d2h bandwidth", "GB/s", false},
	{"min_fp32_tflops", "--min-fp32-tflops", "fp32 throughput", "TFLOP/s", false},
	{"min_fp16_tflops", "--min-fp16-tflops", "fp16 tensor throughput", "TFLOP/s", false},
	{"min_bf16_tflops", "--min-bf16-tflops", "bf16 tensor throughput", "TFLOP/s", false},
	{"max_temp_c", "--max-temp-c", "temperature", "C", true},
};

const char kUsage[] =
	"usage: gpuprobe [options]\n"
	"\n"
	"Inventories the GPUs of this node, measures them and prints one JSON\n"
	"object on stdout (schema: drivers/onprem/probe/README.md).\n"
	"\n"
	"  --quick               short run (<= ~3 s on one GPU): smaller buffers, fewer samples\n"
	"  --device LIST         CUDA device ordinals to probe, e.g. 0 or 0,2 (default: all)\n"
	"  --json-pretty         indented JSON (the default)\n"
	"  --compact             the JSON object on one line\n"
	"  --tensor-method M     auto (default: cuBLAS if loadable, else wmma) | cublas | wmma | none\n"
	"  --config FILE         thresholds as key = value lines (keys as below, without --,\n"
	"                        '-' or '_'); command-line flags win over the file\n"
	"  --min-d2d-gbps X      device->device bandwidth, read+write convention, GB/s\n"
	"  --min-h2d-gbps X      host->device bandwidth (pinned), GB/s\n"
	"  --min-d2h-gbps X      device->host bandwidth (pinned), GB/s\n"
	"  --min-fp32-tflops X   FP32 FMA throughput, TFLOP/s\n"
	"  --min-fp16-tflops X   FP16 tensor throughput, TFLOP/s\n"
	"  --min-bf16-tflops X   BF16 tensor throughput, TFLOP/s\n"
	"  --max-temp-c X        GPU temperature after the measurements, C (needs NVML)\n"
	"  --self-test           print the report of two synthetic GPUs (no CUDA calls) to\n"
	"                        check the schema and the health rules; thresholds apply\n"
	"  --help, --version\n"
	"\n"
	"Thresholds not given default to 50% of the data-sheet figure of the\n"
	"detected GPU (d2d, fp32, and fp16/bf16 when measured with cuBLAS) and to\n"
	"50% of the PCIe link's theoretical rate (h2d, d2h; needs NVML).  A value\n"
	"of 0 disables that check.\n"
	"\n"
	"Exit status: 0 healthy; 1 unhealthy; 2 usage error; 3 no usable GPU or\n"
	"driver (JSON {\"error\": ..., \"gpus\": 0}); 4 CUDA error during a\n"
	"measurement.\n";

int usage_error(const std::string &msg)
{
	fprintf(stderr, "gpuprobe: %s\nTry 'gpuprobe --help'.\n", msg.c_str());
	return EXIT_USAGE;
}

// Parses a threshold value: a finite number >= 0, the whole string.
static bool parse_threshold(const char *s, double *out)
{
	if (!s || !*s)
		return false;
	char *end = nullptr;
	errno = 0;
	double v = strtod(s, &end);
	while (end && (*end == ' ' || *end == '\t'))
		end++;
	if (errno || !end || *end || !std::isfinite(v) || v < 0)
		return false;
	*out = v;
	return true;
}

// "0,2" -> {0, 2}.  Ordinals must be distinct non-negative integers.
static bool parse_devices(const char *s, std::vector<int> *out)
{
	out->clear();
	const char *p = s;
	if (!p || !*p)
		return false;
	if (strcmp(p, "all") == 0)
		return true;
	while (*p) {
		if (*p < '0' || *p > '9')
			return false;
		char *end = nullptr;
		errno = 0;
		long v = strtol(p, &end, 10);
		if (errno || v > 1024)
			return false;
		if (std::find(out->begin(), out->end(), int(v)) != out->end())
			return false;
		out->push_back(int(v));
		p = end;
		if (*p == ',') {
			p++;
			if (!*p)
				return false;
		} else if (*p) {
			return false;
		}
	}
	return true;
}

// Maps a config key or flag name (dashes or underscores) to its threshold.
static int threshold_by_key(const std::string &k)
{
	std::string n = k;
	std::replace(n.begin(), n.end(), '-', '_');
	for (int t = 0; t < T_COUNT; t++)
		if (n == kThr[t].key)
			return t;
	return -1;
}

static std::string trim(const std::string &s)
{
	size_t a = s.find_first_not_of(" \t\r\n");
	if (a == std::string::npos)
		return "";
	size_t b = s.find_last_not_of(" \t\r\n");
	return s.substr(a, b - a + 1);
}

// Reads `key = value` thresholds; '#' starts a comment.  Values already set
// by flags are kept.  Returns an error message, or "" on success.
std::string load_config(Options &o)
{
	FILE *f = fopen(o.config.c_str(), "r");
	if (!f)
		return strf("--config %s: %s", o.config.c_str(), strerror(errno));
	std::string err;
	char line[1024];
	int lineno = 0;
	while (err.empty() && fgets(line, sizeof line, f)) {
		lineno++;
		std::string l(line);
		if (l.size() == sizeof line - 1 && l.back() != '\n') {
			err = strf("%s:%d: line too long", o.config.c_str(), lineno);
			break;
		}
		size_t hash = l.find('#');
		if (hash != std::string::npos)
			l.erase(hash);
		l = trim(l);
		if (l.empty())
			continue;
		size_t eq = l.find('=');
		if (eq == std::string::npos) {
			err = strf("%s:%d: expected 'key = value', got '%s'",
			           o.config.c_str(), lineno, l.c_str());
			break;
		}
		std::string k = trim(l.substr(0, eq)), v = trim(l.substr(eq + 1));
		int t = threshold_by_key(k);
		if (t < 0) {
			std::string known;
			for (int i = 0; i < T_COUNT; i++)
				known += std::string(i ? ", " : "") + kThr[i].key;
			err = strf("%s:%d: unknown key '%s' (known keys: %s)",
			           o.config.c_str(), lineno, k.c_str(), known.c_str());
			break;
		}
		double x;
		if (!parse_threshold(v.c_str(), &x)) {
			err = strf("%s:%d: %s: '%s' is not a number >= 0",
			           o.config.c_str(), lineno, k.c_str(), v.c_str());
			break;
		}
		if (o.thr_src[t] != SRC_FLAG) {
			o.thr[t] = x;
			o.thr_src[t] = SRC_CONFIG;
		}
	}
	if (err.empty() && ferror(f))
		err = strf("--config %s: read error", o.config.c_str());
	fclose(f);
	return err;
}

// Returns -1 on success, else the exit code to return.
int parse_args(int argc, char **argv, Options &o)
{
	for (int i = 1; i < argc; i++) {
		std::string a = argv[i];
		std::string val;
		bool has_eq = false;
		if (a.rfind("--", 0) == 0) {
			size_t eq = a.find('=');
			if (eq != std::string::npos) {
				val = a.substr(eq + 1);
				a.erase(eq);
				has_eq = true;
			}
		}
		auto need = [&](std::string *out) -> bool {
			if (has_eq) {
				*out = val;
				return true;
			}
			if (i + 1 >= argc)
				return false;
			*out = argv[++i];
			return true;
		};
		auto no_value = [&]() { return !has_eq; };
		if (has_eq && (a == "--quick" || a == "--json-pretty" || a == "--compact" ||
		               a == "--help" || a == "--version" || a == "--self-test"))
			return usage_error(a + " takes no value");

		if (a == "--help" || a == "-h") {
			o.help = true;
		} else if (a == "--version") {
			o.version = true;
		} else if (a == "--self-test" && no_value()) {
			o.self_test = true;
		} else if (a == "--quick" && no_value()) {
			o.quick = true;
		} else if (a == "--json-pretty" && no_value()) {
			o.pretty = true;
		} else if (a == "--compact" && no_value()) {
			o.pretty = false;
		} else if (a == "--device") {
			std::string v;
			if (!need(&v))
				return usage_error("--device needs a value (e.g. 0 or 0,1)");
			if (!parse_devices(v.c_str(), &o.devices))
				return usage_error("--device '" + v +
				                   "': expected ordinals like 0 or 0,2, or 'all'");
		} else if (a == "--config") {
			if (!need(&o.config) || o.config.empty())
				return usage_error("--config needs a file name");
		} else if (a == "--tensor-method") {
			std::string v;
			if (!need(&v))
				return usage_error("--tensor-method needs a value");
			if (v == "auto")
				o.tensor = TP_AUTO;
			else if (v == "cublas")
				o.tensor = TP_CUBLAS;
			else if (v == "wmma")
				o.tensor = TP_WMMA;
			else if (v == "none")
				o.tensor = TP_NONE;
			else
				return usage_error("--tensor-method '" + v +
				                   "': expected auto, cublas, wmma or none");
		} else if (a.rfind("--", 0) == 0 && threshold_by_key(a.substr(2)) >= 0 &&
		           a.find('_') == std::string::npos) {
			int t = threshold_by_key(a.substr(2));
			std::string v;
			if (!need(&v))
				return usage_error(a + " needs a value");
			if (!parse_threshold(v.c_str(), &o.thr[t]))
				return usage_error(a + " '" + v + "': expected a number >= 0");
			o.thr_src[t] = SRC_FLAG;
		} else {
			return usage_error("unknown option '" + std::string(argv[i]) + "'");
		}
	}
	return -1;
}
