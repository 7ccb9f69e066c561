// The keyboard's place survives a button that disables itself.
//
// Many buttons are off while their work runs (Start in step mode, a burst,
// the crash lab's sweep). A browser drops the focus of a control that becomes
// disabled to <body>, so the next Tab starts again at the top of the page.
// Written once for the whole page: when the focused control is disabled, the
// focus moves to the nearest enabled control of its group (step mode's Start
// → Next), or else to its panel's heading; and when the control is enabled
// again while the focus is still parked on that heading, the focus goes back
// to it.

const CONTROLS = 'button, input, select, textarea, a[href]';

let lastFocused = null;
// {from, at}: the focus was moved from `from` (disabled) to the heading `at`.
let parked = null;

export function mount() {
  document.addEventListener('focusin', (event) => {
    lastFocused = event.target;
  });
  new MutationObserver((records) => {
    for (const { target } of records) {
      if (target === lastFocused && target.disabled && !hasFocus()) {
        moveNear(target);
      } else if (parked !== null && target === parked.from && !target.disabled && document.activeElement === parked.at) {
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
    parked = { from: control, at: heading };
  }
}

function usable(element) {
  return !element.disabled && !element.hidden && element.getClientRects().length > 0;
}
