// probe_json.h -- a small streaming JSON writer for gpuprobe.
//
// Host-only C++.  Strings are escaped per RFC 8259 (quote, backslash,
// control characters as \u00XX); invalid UTF-8 byte sequences are replaced
// with U+FFFD so the output is always valid JSON even if a device name or
// hostname holds garbage.  Numbers that are NaN or infinite are written as
// null (JSON has no spelling for them).
#ifndef GPUPROBE_JSON_H
#define GPUPROBE_JSON_H

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

class JsonWriter {
public:
	explicit JsonWriter(bool pretty) : pretty_(pretty) {}

	void begin_object() { open('{'); }
	void end_object() { close('}'); }
	void begin_array() { open('['); }
	void end_array() { close(']'); }

	// Writes "name": -- the next call writes its value.
	void key(const char *name)
	{
		separate();
		put_string(name);
		out_ += pretty_ ? ": " : ":";
		after_key_ = true;
	}

	void str(const std::string &s) { value_prefix(); put_string(s.c_str(), s.size()); }
	void str(const char *s)
	{
		if (!s) {
			null();
			return;
		}
		value_prefix();
		put_string(s);
	}
	void null() { value_prefix(); out_ += "null"; }
	void boolean(bool b) { value_prefix(); out_ += b ? "true" : "false"; }
	void integer(long long v)
	{
		value_prefix();
		char buf[32];
		snprintf(buf, sizeof buf, "%lld", v);
		out_ += buf;
	}
	// A number rounded to `decimals` places (trailing zeros kept: stable
	// column widths are not a goal, stable parsing is).
	void number(double v, int decimals)
	{
		if (!std::isfinite(v)) {
			null();
			return;
		}
		value_prefix();
		char buf[64];
		snprintf(buf, sizeof buf, "%.*f", decimals, v);
		out_ += buf;
	}

	// Convenience: "name": value pairs.
	void kv(const char *k, const std::string &v) { key(k); str(v); }
	void kv(const char *k, const char *v) { key(k); str(v); }
	void kv_bool(const char *k, bool v) { key(k); boolean(v); }
	void kv_int(const char *k, long long v) { key(k); integer(v); }
	void kv_num(const char *k, double v, int decimals) { key(k); number(v, decimals); }
	void kv_null(const char *k) { key(k); null(); }

	const std::string &text() const { return out_; }

private:
	struct Level {
		char closer;
		int items;
	};

	void open(char c)
	{
		value_prefix();
		out_ += c;
		stack_.push_back(Level{c == '{' ? '}' : ']', 0});
	}

	void close(char c)
	{
		bool had_items = !stack_.empty() && stack_.back().items > 0;
		if (!stack_.empty())
			stack_.pop_back();
		if (pretty_ && had_items)
			newline();
		out_ += c;
	}

	// Before a value: either right after a key, or as an array element /
	// the top-level value.
	void value_prefix()
	{
		if (after_key_) {
			after_key_ = false;
			return;
		}
		separate();
	}

	// Comma and indentation before a new member or element.
	void separate()
	{
		if (stack_.empty())
			return;
		if (stack_.back().items++ > 0)
			out_ += ',';
		if (pretty_)
			newline();
	}

	void newline()
	{
		out_ += '\n';
		out_.append(2 * stack_.size(), ' ');
	}

	void put_string(const char *s) { put_string(s, std::char_traits<char>::length(s)); }

	void put_string(const char *s, size_t n)
	{
		out_ += '"';
		const unsigned char *p = reinterpret_cast<const unsigned char *>(s);
		size_t i = 0;
		while (i < n) {
			unsigned char c = p[i];
			if (c < 0x80) {
				escape_ascii(c);
				i++;
				continue;
			}
			size_t len = utf8_len(p + i, n - i);
			if (len == 0) {
				out_ += "\xEF\xBF\xBD"; // U+FFFD
				i++;
			} else {
				out_.append(s + i, len);
				i += len;
			}
		}
		out_ += '"';
	}

	void escape_ascii(unsigned char c)
	{
		switch (c) {
		case '"': out_ += "\\\""; return;
		case '\\': out_ += "\\\\"; return;
		case '\n': out_ += "\\n"; return;
		case '\r': out_ += "\\r"; return;
		case '\t': out_ += "\\t"; return;
		case '\b': out_ += "\\b"; return;
		case '\f': out_ += "\\f"; return;
		default: break;
		}
		if (c < 0x20 || c == 0x7f) {
			char buf[8];
			snprintf(buf, sizeof buf, "\\u%04x", c);
			out_ += buf;
		} else {
			out_ += static_cast<char>(c);
		}
	}

	// Length of the well-formed UTF-8 sequence at p (RFC 3629: no
	// overlongs, no surrogates, <= U+10FFFF), or 0 when it is not one.
	static size_t utf8_len(const unsigned char *p, size_t avail)
	{
		unsigned char c = p[0];
		size_t len;
		unsigned int cp;
		if (c >= 0xC2 && c <= 0xDF) {
			len = 2;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			len = 3;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return 0;
		}
		if (avail < len)
			return 0;
		for (size_t k = 1; k < len; k++) {
			if ((p[k] & 0xC0) != 0x80)
				return 0;
			cp = (cp << 6) | (p[k] & 0x3F);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
		    (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
			return 0;
		return len;
	}

	std::string out_;
	std::vector<Level> stack_;
	bool pretty_;
	bool after_key_ = false;
};

#endif
