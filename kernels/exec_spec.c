/* owner: exec backend */
/* exec_spec.c: an exec: or exec-persistent: spec with its command resolved as this process would run
 * it: the first word of the command, a program name found on PATH (the interpreter of
 * "python worker.py"), or a relative path, becomes an absolute path, so that a reproducer runs the
 * same program from another shell (an environment without that PATH, another directory). Shell
 * keywords, builtins, variable assignments and words with shell syntax stay as they are. */
#include "config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "exec.h"

/* Words the shell runs itself (POSIX special and regular builtins, keywords): never a path. */
static int shell_word(const char *w, size_t n)
{
  static const char *const words[] = {"alias", "bg", "break", "cd", "command", "continue", "echo", "eval", "exec",
                                      "exit", "export", "false", "fc", "fg", "getopts", "hash", "jobs", "kill",
                                      "local", "printf", "pwd", "read", "readonly", "return", "set", "shift",
                                      "test", "times", "trap", "true", "type", "ulimit", "umask", "unalias",
                                      "unset", "wait", "if", "then", "else", "elif", "fi", "for", "while",
                                      "until", "do", "done", "case", "esac", "time", ".", ":", "[", "!", "{", "}"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (strlen(words[i]) == n && !strncmp(words[i], w, n)) return 1;
  return 0;
}

static int executable(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* The absolute path of program word w (n bytes) into out: 1, or 0 when it stays as it is. */
static int resolve_word(const char *w, size_t n, char *out, size_t outn)
{
  char word[1024];
  if (n == 0 || n >= sizeof word || shell_word(w, n)) return 0;
  for (size_t i = 0; i < n; i++)
    if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._+-/", w[i])) return 0;
  memcpy(word, w, n);
  word[n] = 0;
  if (word[0] == '/') return 0;
  char cand[4200];
  if (strchr(word, '/')) {   /* relative to this directory */
    char cwd[2048];
    if (!getcwd(cwd, sizeof cwd)) return 0;
    snprintf(cand, sizeof cand, "%s/%s", cwd, word);
    return executable(cand) && snprintf(out, outn, "%s", cand) < (int)outn;
  }
  const char *path = getenv("PATH");
  for (const char *p = path ? path : ""; *p;) {
    size_t l = strcspn(p, ":");
    if (l > 0 && l < 2048) {
      snprintf(cand, sizeof cand, "%.*s/%s", (int)l, p, word);
      if (cand[0] == '/' && executable(cand)) return snprintf(out, outn, "%s", cand) < (int)outn;
    }
    p += l + (p[l] == ':');
  }
  return 0;
}

int ac_exec_spec_resolved(const char *spec, char *out, size_t n)
{
  static const char *const prefixes[] = {"exec-persistent:", "exec:"};
  for (int i = 0; i < 2; i++) {
    size_t pl = strlen(prefixes[i]);
    if (strncmp(spec, prefixes[i], pl)) continue;
    const char *cmd = spec + pl, *w = cmd + strspn(cmd, " \t");
    size_t wl = strcspn(w, " \t");
    char abs[4200], q[8500];
    if (!resolve_word(w, wl, abs, sizeof abs) || !ac_shquote(abs, q, sizeof q)) return 0;
    int len = snprintf(out, n, "%s%.*s%s%s", prefixes[i], (int)(w - cmd), cmd, q, w + wl);
    return len > 0 && (size_t)len < n;
  }
  return 0;
}
