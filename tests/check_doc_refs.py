#!/usr/bin/env python3
"""What a map names must exist: every file path and every C symbol that a
doc quotes in backticks (`codec/hq.c`, `udp/udp.c`, `gw_sum_add`,
`GW_PKT_F_FRAME()`) is looked up in the source tree; build outputs
(`build...`), install and system paths (`<prefix>/...`, `/...`) are not. A path is found at
the root or as the tail of a file's path (`udp/udp.c` is
dataplane/udp/udp.c); a symbol (gw_, GW_, coll_, dense_, sk_, hq_, agg_
and comm_ names) in a source file. Prints what it cannot find and exits
1; a control run on a line naming things that do not exist must fail.

    check_doc_refs.py SOURCE_ROOT DOC.md|FOLDER...   (a folder: its *.md)
"""
import os
import re
import sys

PATH = re.compile(r'^[\w.+-]+(/[\w.+-]+)*\.(c|h|cu|cc|py|sh|md|build|map|txt|json)$')
DIR = re.compile(r'^[\w.-]+(/[\w.-]+)*/$')
SYM = re.compile(r'^((gw|GW|coll|COLL|dense|sk|hq|HQ|agg|comm)_\w+)(\(\))?$')
SRC_EXT = ('.c', '.h', '.cu', '.cc', '.py', '.map', '.build', '.sh')
SKIP_DIRS = {'.git', 'subprojects', 'node_modules', '__pycache__'}


def tree(root):
    files = []
    for d, dirs, names in os.walk(root):
        dirs[:] = [x for x in dirs if x not in SKIP_DIRS and not x.startswith('build')]
        for n in names:
            files.append(os.path.relpath(os.path.join(d, n), root))
    return files


def refs(text):
    """Backticked tokens, code blocks left out (commands and output)."""
    text = re.sub(r'```.*?```', '', text, flags=re.S)
    for m in re.finditer(r'`([^`\n]+)`', text):
        yield m.group(1).strip()


def check(root, files, docs_text, name):
    paths = set(files)
    tails = set()
    dirs = set()
    for f in files:
        parts = f.split('/')
        for i in range(len(parts)):
            tails.add('/'.join(parts[i:]))
        for i in range(1, len(parts)):
            for j in range(i):
                dirs.add('/'.join(parts[j:i]) + '/')
    corpus = None
    missing = []
    for tok in refs(docs_text):
        if tok.startswith(('build', '<', '/', '../')):
            continue   # build outputs, install and system paths
        if PATH.match(tok):
            if tok not in paths and tok not in tails:
                missing.append('file %s' % tok)
        elif DIR.match(tok) and '/' in tok[:-1] or tok in ('common/', 'codec/', 'collective/'):
            if tok not in dirs:
                missing.append('folder %s' % tok)
        else:
            m = SYM.match(tok)
            if not m:
                continue
            if corpus is None:
                chunks = []
                for f in files:
                    if f.endswith(SRC_EXT):
                        try:
                            with open(os.path.join(root, f), errors='replace') as fh:
                                chunks.append(fh.read())
                        except OSError:
                            pass
                corpus = '\n'.join(chunks)
            if not re.search(r'\b%s\b' % re.escape(m.group(1)), corpus):
                missing.append('symbol %s' % m.group(1))
    return sorted(set(missing))


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    root = sys.argv[1]
    files = tree(root)
    # The control: names that do not exist must be reported.
    # (The symbol is put together here, so this file does not define it.)
    control = '`codec/nosuch.c`, `%s`, `nosuch/folder/`' % ('gw_no_such' + '_call')
    if len(check(root, files, control, 'control')) != 3:
        print('FAIL: the control: made-up names were not all reported')
        return 1
    docs = []
    for a in sys.argv[2:]:
        if os.path.isdir(a):
            docs += sorted(os.path.join(a, n) for n in os.listdir(a) if n.endswith('.md'))
        else:
            docs.append(a)
    ok = True
    for doc in docs:
        with open(doc) as fh:
            name = os.path.relpath(doc, root)
            for x in check(root, files, fh.read(), name):
                print('FAIL: %s names %s, which is not in the tree' % (name, x))
                ok = False
    if ok:
        print('ok: every file, folder and symbol %s names exists'
              % ', '.join(os.path.relpath(d, root) for d in docs))
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
