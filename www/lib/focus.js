// The keyboard's place survives a button that disables itself.
//
// Many buttons are off while their work runs (Start in step mode, a burst,
// the crash lab's sweep). A browser drops the focus of a control that becomes
// disabled to <body>, so the next Tab starts again at the top of the page.
// Written once for the whole page: when the focused control is disabled, the
// focus moves to the nearest enabled control of its group (step mode's Start
// → Next), or else to its panel's heading; and when the control is enabled
// again (or another control of its group is) while the focus is still parked
// on that heading, the focus goes there.

const CONTROLS = 'button, input, select, textarea, a[href]';

let lastFocused = null;
// {from, group, at}: the focus was moved from `from` (disabled) to the
// heading `at`, as nothing else in `group` could take it.
let parked = null;

export function mount() {
  document.addEventListener('focusin', (event) => {
    lastFocused = event.target;
  });
  new MutationObserver((records) => {
    for (const { target } of records) {
      // The browser drops the focus a little later (when it next renders),
      // so "still on it" counts as lost too.
      if (target === lastFocused && target.disabled && (document.activeElement === target || !hasFocus())) {
        moveNear(target);
      } else if (
        parked !== null &&
        !target.disabled &&
        document.activeElement === parked.at &&
        (target === parked.from || parked.group?.contains(target))
      ) {
        parked = null;
        target.focus();
      }
    }
  }).observe(document.body, { attributes: true, attributeFilter: ['disabled'], subtree: true });
}

/** Whether some element other than <body> holds the focus. */
function hasFocus() {
  return document.activeElement !== null && document.activeElement !== document.body;
}

function moveNear(control) {
  const group = control.closest('.actions, [role="group"], form, section');
  const enabled = group ? [...group.querySelectorAll(CONTROLS)].filter(usable) : [];
  const after = enabled.find((candidate) => control.compareDocumentPosition(candidate) & Node.DOCUMENT_POSITION_FOLLOWING);
  const near = after ?? enabled.at(-1);
  if (near) {
    near.focus();
    return;
  }
  const heading = control.closest('section')?.querySelector('h2, h3');
  if (heading) {
    if (!heading.hasAttribute('tabindex')) {
      heading.setAttribute('tabindex', '-1');
    }
    heading.focus();
    parked = { from: control, group, at: heading };
  }
}

function usable(element) {
  return !element.disabled && !element.hidden && element.getClientRects().length > 0;
}
