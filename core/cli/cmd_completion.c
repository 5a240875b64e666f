/* cmd_completion.c -- `gpubroker completion bash|zsh|fish`: a shell
 * completion script written from the command table (commands.c), each
 * command's flags and subcommands and the common flags (cli.c), so it
 * lists what this binary accepts and nothing else. */
#include <string.h>

#include "commands.h"

/* The formats -o takes (cli.c's set_output). */
#define OUTPUT_FORMATS "table json yaml"

/* How a flag's value is completed, from its metavar. */
typedef enum val_kind { VAL_NONE, VAL_ANY, VAL_FILE, VAL_DIR, VAL_FORMAT } val_kind;

static val_kind value_kind(const gb_flag *f)
{
	if (!f->arg)
		return VAL_NONE;
	if (strcmp(f->name, "output") == 0)
		return VAL_FORMAT;
	if (strcmp(f->arg, "DIR") == 0)
		return VAL_DIR;
	if (strcmp(f->arg, "FILE") == 0 || strcmp(f->arg, "SPEC") == 0 ||
	    strncmp(f->arg, "FILE|", 5) == 0)
		return VAL_FILE;
	return VAL_ANY;
}

static const gb_flag *cmd_flags(const gb_cmd *c)
{
	static const gb_flag none = {NULL, 0, NULL, NULL, NULL, NULL, NULL};
	const gb_flag *f = c->flags ? c->flags() : NULL;
	return f ? f : &none;
}

/* What a command's positional arguments complete to: its subcommands,
 * for `help` and `completion` the names they take; NULL: files. */
static void print_positionals(FILE *f, const gb_cmd *c)
{
	if (strcmp(c->name, "help") == 0) {
		for (size_t i = 0; gb_commands[i]; i++)
			fprintf(f, "%s%s", i ? " " : "", gb_commands[i]->name);
	} else if (gb_cli_subcommands(c)) {
		fputs(gb_cli_subcommands(c), f);
	}
}

static int has_positionals(const gb_cmd *c)
{
	return gb_cli_subcommands(c) || strcmp(c->name, "help") == 0;
}

/* The first sentence of a help text, at most 70 bytes, with the
 * characters in `bad` replaced by spaces (for quoting in scripts). */
static const char *short_help(const char *h, const char *bad, char *buf,
                              size_t cap)
{
	size_t n = 0;
	for (; h && *h && n + 1 < cap && n < 70; h++) {
		if (*h == ';' || *h == '(' || (*h == '.' && h[1] == ' '))
			break;
		buf[n++] = strchr(bad, *h) ? ' ' : *h;
	}
	while (n && buf[n - 1] == ' ')
		n--;
	buf[n] = '\0';
	return buf;
}

/* ------------------------------------------------------------------ bash */

static void bash_flag_words(FILE *f, const gb_flag *fl)
{
	for (size_t k = 0; fl[k].name; k++) {
		fprintf(f, " --%s", fl[k].name);
		if (fl[k].shortname)
			fprintf(f, " -%c", fl[k].shortname);
	}
}

/* `case "$prev" in` arms for the flags of fl that take a value. */
static void bash_value_arms(FILE *f, const gb_flag *fl, const char *indent)
{
	static const char *const action[] = {
		[VAL_ANY] = "return 0",
		[VAL_FILE] = "COMPREPLY=($(compgen -f -- \"$cur\")); return 0",
		[VAL_DIR] = "COMPREPLY=($(compgen -d -- \"$cur\")); return 0",
		[VAL_FORMAT] = "COMPREPLY=($(compgen -W \"" OUTPUT_FORMATS
		               "\" -- \"$cur\")); return 0",
	};
	for (size_t k = 0; fl[k].name; k++) {
		val_kind v = value_kind(&fl[k]);
		if (v == VAL_NONE)
			continue;
		fprintf(f, "%s--%s", indent, fl[k].name);
		if (fl[k].shortname)
			fprintf(f, "|-%c", fl[k].shortname);
		fprintf(f, ") %s ;;\n", action[v]);
	}
}

/* Every flag that takes a value, of any command, as a case pattern
 * ("--config|-c|--file|-f"): the word after one is its value. */
static void bash_value_pattern(FILE *f)
{
	const char *seen[256];
	size_t n = 0;
	for (size_t i = 0; i == 0 || gb_commands[i - 1]; i++) {
		const gb_flag *fl = i == 0 ? gb_cli_common_flags()
		                           : cmd_flags(gb_commands[i - 1]);
		for (size_t k = 0; fl[k].name; k++) {
			size_t j = 0;
			if (!fl[k].arg)
				continue;
			while (j < n && strcmp(seen[j], fl[k].name) != 0)
				j++;
			if (j < n || n == GB_ARRAY_LEN(seen))
				continue;
			seen[n++] = fl[k].name;
			fprintf(f, "%s--%s", n > 1 ? "|" : "", fl[k].name);
			if (fl[k].shortname)
				fprintf(f, "|-%c", fl[k].shortname);
		}
	}
}

static void print_bash(FILE *f)
{
	const gb_flag *common = gb_cli_common_flags();
	fputs("# bash completion for gpubroker (written by 'gpubroker completion "
	      "bash';\n# load it with: source <(gpubroker completion bash))\n"
	      "_gpubroker() {\n"
	      "\tlocal cur=\"${COMP_WORDS[COMP_CWORD]}\" prev=\"\" cmd=\"\" i w\n"
	      "\tlocal flags=\"\" words=\"\" npos=0\n"
	      "\t((COMP_CWORD > 0)) && prev=\"${COMP_WORDS[COMP_CWORD-1]}\"\n"
	      "\tCOMPREPLY=()\n"
	      "\t# the command: the first word that is not a flag or a flag's\n"
	      "\t# value; npos: the arguments after it\n"
	      "\tfor ((i = 1; i < COMP_CWORD; i++)); do\n"
	      "\t\tw=\"${COMP_WORDS[i]}\"\n"
	      "\t\tcase \"$w\" in\n", f);
	fputs("\t\t", f);
	bash_value_pattern(f);
	fputs(") ((i++)) ;;\n"
	      "\t\t-*) ;;\n"
	      "\t\t*) if [[ -z \"$cmd\" ]]; then cmd=\"$w\"; "
	      "else ((npos++)); fi ;;\n"
	      "\t\tesac\n"
	      "\tdone\n"
	      "\tcase \"$prev\" in\n", f);
	bash_value_arms(f, common, "\t");
	fputs("\tesac\n\tcase \"$cmd\" in\n\t\"\")\n\t\tflags=\"", f);
	bash_flag_words(f, common);
	fputs("\"\n\t\twords=\"", f);
	for (size_t i = 0; gb_commands[i]; i++)
		fprintf(f, "%s%s", i ? " " : "", gb_commands[i]->name);
	fputs("\" ;;\n", f);
	for (size_t i = 0; gb_commands[i]; i++) {
		const gb_cmd *c = gb_commands[i];
		const gb_flag *fl = cmd_flags(c);
		fprintf(f, "\t%s)\n", c->name);
		if (fl[0].name) {
			int any = 0;
			for (size_t k = 0; fl[k].name; k++)
				any |= fl[k].arg != NULL;
			if (any) {
				fputs("\t\tcase \"$prev\" in\n", f);
				bash_value_arms(f, fl, "\t\t");
				fputs("\t\tesac\n", f);
			}
		}
		fputs("\t\tflags=\"", f);
		bash_flag_words(f, common);
		bash_flag_words(f, fl);
		fputs("\"\n\t\twords=\"", f);
		print_positionals(f, c);
		fputs("\" ;;\n", f);
	}
	fputs("\t*) return 0 ;;\n"
	      "\tesac\n"
	      "\tif [[ \"$cur\" == -* ]]; then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$flags\" -- \"$cur\"))\n"
	      "\telif [[ -n \"$words\" && ( $npos -eq 0 || $cmd == help ) ]]; "
	      "then\n"
	      "\t\tCOMPREPLY=($(compgen -W \"$words\" -- \"$cur\"))\n"
	      "\telse\n"
	      "\t\tCOMPREPLY=($(compgen -f -- \"$cur\"))\n"
	      "\tfi\n"
	      "\treturn 0\n"
	      "}\n"
	      "complete -o filenames -F _gpubroker gpubroker\n", f);
}

/* ------------------------------------------------------------------- zsh */

/* One _arguments spec per flag, in single quotes. */
static void zsh_flag_specs(FILE *f, const gb_flag *fl, const char *indent)
{
	static const char *const action[] = {
		[VAL_NONE] = "",
		[VAL_ANY] = ":value: ",
		[VAL_FILE] = ":file:_files",
		[VAL_DIR] = ":directory:_files -/",
		[VAL_FORMAT] = ":format:(" OUTPUT_FORMATS ")",
	};
	for (size_t k = 0; fl[k].name; k++) {
		char h[96];
		/* repeatable flags may come again: no exclusion list */
		short_help(fl[k].help, "[]:'\\`$", h, sizeof(h));
		if (fl[k].shortname)
			fprintf(f, "%s'(-%c --%s)'{-%c,--%s}'[%s]%s'\n", indent,
			        fl[k].shortname, fl[k].name, fl[k].shortname,
			        fl[k].name, h, action[value_kind(&fl[k])]);
		else
			fprintf(f, "%s'--%s[%s]%s'\n", indent, fl[k].name, h,
			        action[value_kind(&fl[k])]);
	}
}

static void print_zsh(FILE *f)
{
	const gb_flag *common = gb_cli_common_flags();
	fputs("#compdef gpubroker\n"
	      "# zsh completion for gpubroker (written by 'gpubroker completion "
	      "zsh';\n# save it as _gpubroker in a folder of $fpath, or "
	      "source it)\n"
	      "_gpubroker() {\n"
	      "\tlocal curcontext=\"$curcontext\" state line ret=1\n"
	      "\tlocal -a common commands\n"
	      "\tcommon=(\n", f);
	zsh_flag_specs(f, common, "\t\t");
	fputs("\t)\n\tcommands=(\n", f);
	for (size_t i = 0; gb_commands[i]; i++) {
		char h[96];
		fprintf(f, "\t\t'%s:%s'\n", gb_commands[i]->name,
		        short_help(gb_commands[i]->summary, "'\\`$", h,
		                   sizeof(h)));
	}
	fputs("\t)\n"
	      "\t_arguments -C $common '1:command:->command' "
	      "'*::argument:->argument' && ret=0\n"
	      "\tcase $state in\n"
	      "\tcommand)\n"
	      "\t\t_describe -t commands 'gpubroker command' commands && ret=0 ;;\n"
	      "\targument)\n"
	      "\t\tcase $line[1] in\n", f);
	for (size_t i = 0; gb_commands[i]; i++) {
		const gb_cmd *c = gb_commands[i];
		fprintf(f, "\t\t%s)\n\t\t\t_arguments $common \\\n", c->name);
		zsh_flag_specs(f, cmd_flags(c), "\t\t\t\t");
		if (has_positionals(c)) {
			fputs("\t\t\t\t'*:argument:(", f);
			print_positionals(f, c);
			fputs(")'", f);
		} else {
			fputs("\t\t\t\t'*:file:_files'", f);
		}
		fputs(" && ret=0 ;;\n", f);
	}
	fputs("\t\tesac ;;\n"
	      "\tesac\n"
	      "\treturn ret\n"
	      "}\n"
	      "if [[ $zsh_eval_context[-1] == loadautofunc ]]; then\n"
	      "\t_gpubroker \"$@\"\n"
	      "else\n"
	      "\tcompdef _gpubroker gpubroker\n"
	      "fi\n", f);
}

/* ------------------------------------------------------------------ fish */

static void fish_flags(FILE *f, const gb_flag *fl, const char *cond)
{
	for (size_t k = 0; fl[k].name; k++) {
		char h[96];
		val_kind v = value_kind(&fl[k]);
		fprintf(f, "complete -c gpubroker");
		if (cond)
			fprintf(f, " -n '__fish_seen_subcommand_from %s'", cond);
		if (fl[k].shortname)
			fprintf(f, " -s %c", fl[k].shortname);
		fprintf(f, " -l %s", fl[k].name);
		if (v == VAL_FORMAT)
			fputs(" -x -a '" OUTPUT_FORMATS "'", f);
		else if (v == VAL_FILE || v == VAL_DIR)
			fputs(" -r -F", f);
		else if (v == VAL_ANY)
			fputs(" -x", f);
		fprintf(f, " -d '%s'\n",
		        short_help(fl[k].help, "'\\", h, sizeof(h)));
	}
}

static void print_fish(FILE *f)
{
	fputs("# fish completion for gpubroker (written by 'gpubroker "
	      "completion fish';\n# save it as "
	      "~/.config/fish/completions/gpubroker.fish)\n"
	      "complete -c gpubroker -f\n", f);
	for (size_t i = 0; gb_commands[i]; i++) {
		char h[96];
		fprintf(f, "complete -c gpubroker -n __fish_use_subcommand -a %s "
		           "-d '%s'\n", gb_commands[i]->name,
		        short_help(gb_commands[i]->summary, "'\\", h, sizeof(h)));
	}
	fish_flags(f, gb_cli_common_flags(), NULL);
	for (size_t i = 0; gb_commands[i]; i++) {
		const gb_cmd *c = gb_commands[i];
		fish_flags(f, cmd_flags(c), c->name);
		if (has_positionals(c)) {
			fprintf(f, "complete -c gpubroker -n "
			           "'__fish_seen_subcommand_from %s' -a '", c->name);
			print_positionals(f, c);
			fputs("'\n", f);
		} else {
			fprintf(f, "complete -c gpubroker -n "
			           "'__fish_seen_subcommand_from %s' -F\n", c->name);
		}
	}
}

/* ---------------------------------------------------------------- command */

static const struct {
	const char *name;
	void (*print)(FILE *f);
} shells[] = {
	{"bash", print_bash},
	{"zsh", print_zsh},
	{"fish", print_fish},
};

static int run_completion(gb_cli *cli)
{
	if (cli->args.n != 1)
		return gb_cli_usage(cli, "name one shell: bash, zsh or fish");
	for (size_t i = 0; i < GB_ARRAY_LEN(shells); i++)
		if (strcmp(cli->args.v[0], shells[i].name) == 0) {
			shells[i].print(stdout);
			return GB_EXIT_OK;
		}
	return gb_cli_usage(cli, "no completion for shell \"%s\" (use bash, "
	                         "zsh or fish)", cli->args.v[0]);
}

const gb_cmd gb_cmd_completion = {
	"completion", "print a shell completion script (bash, zsh, fish)",
	"bash|zsh|fish",
	"Prints a completion script for the shell, made from this binary's\n"
	"commands and flags.  Load it with:\n"
	"  bash: source <(gpubroker completion bash), or save it as\n"
	"        ~/.local/share/bash-completion/completions/gpubroker\n"
	"  zsh:  gpubroker completion zsh > \"${fpath[1]}/_gpubroker\"\n"
	"  fish: gpubroker completion fish > "
	"~/.config/fish/completions/gpubroker.fish\n"
	"'make install' installs all three.",
	NULL, run_completion,
};
