// The SQL console's editor: CodeMirror 6 from npm (pinned in
// xtask/tools/package.json, installed by `cargo xtask setup`, bundled into
// the page by `cargo xtask dist` — the bare imports below exist only in the
// bundle; nothing loads this module unbundled).
//
// Only the pieces the console needs, not CodeMirror's basicSetup: SQLite's
// dialect and highlighting, undo history, bracket matching, and completion of
// keywords and of the database's real table and column names (`setSchema`).
//
// Keys: Ctrl+Enter or Cmd+Enter runs (`onRun`); Escape cancels a running
// query (`onEscape` returns true when there was one to cancel), else closes
// the completion list. Tab is bound to nothing, so it moves the focus out
// of the editor as from any field (the editor never inserts a tab; Enter
// takes a completion).
//
// Styles and the page's CSP (`style-src 'self'`): CodeMirror writes its
// styles with style-mod, which in a document adds a <style> element — one
// the policy refuses (no nonce on a static site). In a shadow root it uses a
// constructed stylesheet instead (adoptedStyleSheets), which the policy does
// not govern. So the editor lives in a shadow root of its holder
// (#sql-editor), and its look is a CodeMirror theme below, in the page's
// colours (CSS custom properties reach into the shadow tree).
//
// A shadow tree cannot point at an id outside it, so the editable element is
// named by aria-label (`setLabel`, on each language switch), not
// aria-labelledby; its description (the keys, the error) is linked by
// element reference (ariaDescribedByElements), which may cross into the
// page.

import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from '@codemirror/autocomplete';
import { defaultKeymap, history, historyKeymap } from '@codemirror/commands';
import { bracketMatching, defaultHighlightStyle, syntaxHighlighting } from '@codemirror/language';
import { SQLite, sql } from '@codemirror/lang-sql';
import { Compartment, EditorState, Prec } from '@codemirror/state';
import { EditorView, drawSelection, keymap } from '@codemirror/view';

/** CodeMirror's own texts the console can show, in Russian (English is CodeMirror's default). */
const PHRASES_RU = {
  Completions: 'Варианты',
  'Control character': 'Управляющий символ',
  'Selection deleted': 'Выделение удалено',
};

const MONOSPACE = 'ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace';

/** The editor's look, in the page's colours (www/base.css). */
const THEME = EditorView.theme({
  '&': {
    border: '1px solid var(--muted)',
    borderRadius: '0.25rem',
    background: 'var(--panel)',
    color: 'var(--text)',
    fontSize: '0.9rem',
  },
  '&.cm-focused': { outline: '3px solid var(--focus)', outlineOffset: '2px' },
  '&:has(.cm-content[aria-invalid="true"])': { border: '2px solid var(--error)', background: 'var(--error-bg)' },
  '.cm-scroller': { fontFamily: MONOSPACE, minHeight: '4.5rem', maxHeight: '16rem', overflow: 'auto' },
  '.cm-content': { padding: '0.375rem 0' },
  '.cm-line': { padding: '0 0.5rem' },
  '.cm-tooltip-autocomplete ul li[aria-selected]': { background: 'var(--accent)', color: 'var(--panel)' },
  '.cm-completionDetail': { marginLeft: '0.75rem', fontStyle: 'normal', opacity: '0.8' },
});

// Typing over a selection: left to the browser, Chrome's editing keeps the
// look of the text it replaces by wrapping the new text in a <span style=…>,
// an inline style the page's CSP refuses (and logs). The editor makes that
// change itself instead (the same edit CodeMirror would read back from the
// DOM), so the browser never writes one. What is replaced is the DOM's
// selection, which a script may have set without the editor having seen it
// yet (the input event's target ranges would say the same, but Chrome gives
// none inside a shadow root).
const typeOverSelection = EditorView.domEventHandlers({
  beforeinput(event, view) {
    if (event.inputType !== 'insertText' || typeof event.data !== 'string' || view.composing) {
      return false;
    }
    const range = domSelection(view);
    if (range === null) {
      return false;
    }
    const ends = [view.posAtDOM(range.startContainer, range.startOffset), view.posAtDOM(range.endContainer, range.endOffset)];
    const from = Math.min(...ends);
    const to = Math.max(...ends);
    if (from === to) {
      return false; // plain typing: CodeMirror's own path (completion, brackets)
    }
    event.preventDefault();
    view.dispatch({
      changes: { from, to, insert: event.data },
      selection: { anchor: from + event.data.length },
      userEvent: 'input.type',
      scrollIntoView: true,
    });
    return true;
  },
});

// The DOM's selection in the editor as one range, or null: the shadow
// root's own view of it where the browser has one (Chrome), else the
// document's.
function domSelection(view) {
  const selection = typeof view.root.getSelection === 'function' ? view.root.getSelection() : document.getSelection();
  if (selection === null || selection.rangeCount !== 1) {
    return null;
  }
  const range = selection.getRangeAt(0);
  const inside = (node) => view.contentDOM.contains(node);
  return inside(range.startContainer) && inside(range.endContainer) ? range : null;
}

/**
 * An editor holding `doc`, in a shadow root of `host`. `id` goes on the
 * editable element, `describedBy` (elements of the page) describe it.
 * Returns `{view, text(), setText(sql), insert(text), focus(),
 * setSchema(tables), setInvalid(bool), setLanguage(lang, label)}`; `tables`
 * maps a table's name to its column names.
 */
export function createEditor(host, { doc, id, describedBy, onRun, onEscape }) {
  const root = host.attachShadow({ mode: 'open' });
  const language = new Compartment();
  const invalid = new Compartment();
  const phrases = new Compartment();
  const label = new Compartment();
  const run = () => {
    onRun();
    return true;
  };
  let schema = {};

  const view = new EditorView({
    parent: root,
    root,
    state: EditorState.create({
      doc,
      extensions: [
        Prec.highest(
          keymap.of([
            { key: 'Ctrl-Enter', run },
            { key: 'Meta-Enter', run },
            { key: 'Escape', run: () => onEscape() },
          ]),
        ),
        history(),
        drawSelection(),
        bracketMatching(),
        closeBrackets(),
        autocompletion({ icons: false }),
        syntaxHighlighting(defaultHighlightStyle),
        language.of(sqlLanguage(schema)),
        keymap.of([...closeBracketsKeymap, ...completionKeymap, ...historyKeymap, ...defaultKeymap]),
        EditorView.lineWrapping,
        EditorView.contentAttributes.of({ id, spellcheck: 'false', autocapitalize: 'off', autocorrect: 'off' }),
        THEME,
        typeOverSelection,
        invalid.of([]),
        phrases.of([]),
        label.of([]),
      ],
    }),
  });
  view.contentDOM.ariaDescribedByElements = describedBy;

  return {
    view,
    text: () => view.state.doc.toString(),
    setText(text) {
      view.dispatch({
        changes: { from: 0, to: view.state.doc.length, insert: text },
        selection: { anchor: text.length },
      });
    },
    insert(text) {
      view.dispatch(view.state.replaceSelection(text));
    },
    focus: () => view.focus(),
    setSchema(tables) {
      schema = tables;
      view.dispatch({ effects: language.reconfigure(sqlLanguage(schema)) });
    },
    setInvalid(on) {
      view.dispatch({
        effects: invalid.reconfigure(on ? EditorView.contentAttributes.of({ 'aria-invalid': 'true' }) : []),
      });
    },
    setLanguage(lang, name) {
      view.dispatch({
        effects: [
          phrases.reconfigure(lang === 'ru' ? EditorState.phrases.of(PHRASES_RU) : []),
          label.reconfigure(EditorView.contentAttributes.of({ 'aria-label': name })),
        ],
      });
    },
  };
}

// SQLite's dialect with the database's names: lang-sql completes table names,
// and a table's columns after "table." (or an alias of it); the extra source
// offers every column name bare as well, its table beside it.
function sqlLanguage(tables) {
  const support = sql({ dialect: SQLite, schema: tables, upperCaseKeywords: true });
  const columns = new Map();
  for (const [table, names] of Object.entries(tables)) {
    for (const name of names) {
      columns.set(name, [...(columns.get(name) ?? []), table]);
    }
  }
  const options = [...columns].map(([label, owners]) => ({ label, type: 'property', detail: owners.join(', ') }));
  const bareColumns = (context) => {
    const word = context.matchBefore(/\w+/);
    if (word === null || (word.from === word.to && !context.explicit)) {
      return null;
    }
    // After "x." the table's own columns are lang-sql's to offer.
    if (word.from > 0 && context.state.sliceDoc(word.from - 1, word.from) === '.') {
      return null;
    }
    return { from: word.from, options, validFor: /^\w*$/ };
  };
  return [support, support.language.data.of({ autocomplete: bareColumns })];
}
