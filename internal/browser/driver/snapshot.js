(() => {
  // Interactive elements get a data-odin-ref the agent names them by; a
  // clone of the page, with hidden elements dropped and each widget
  // replaced by a label, is what the reader converts.
  const interactive = 'a[href], button, input, select, textarea, summary, [role=button], [role=link], [role=checkbox], [role=tab], [role=menuitem], [onclick], [contenteditable=""], [contenteditable=true]';
  document.querySelectorAll('[data-odin-ref]').forEach(e => e.removeAttribute('data-odin-ref'));
  const seen = (e) => !e.checkVisibility || e.checkVisibility({visibilityProperty: true, opacityProperty: false});
  let n = 0;
  for (const e of document.querySelectorAll(interactive)) {
    if (e.type === 'hidden' || !seen(e)) continue;
    e.setAttribute('data-odin-ref', String(++n));
  }
  const body = document.body || document.documentElement;
  const live = Array.from(body.querySelectorAll('*'));
  const copy = body.cloneNode(true);
  const copies = Array.from(copy.querySelectorAll('*'));
  const q = (s) => JSON.stringify(String(s).replace(/\s+/g, ' ').trim().slice(0, 200));
  const label = (e) => {
    const ref = e.getAttribute('data-odin-ref');
    const tag = e.tagName.toLowerCase();
    const name = e.getAttribute('name') ? ' name=' + q(e.getAttribute('name')) : '';
    if (tag === 'input') {
      const type = (e.type || 'text').toLowerCase();
      if (type === 'checkbox' || type === 'radio') return '[' + type + name + (e.checked ? ' checked' : '') + ' ref=' + ref + ']';
      if (type === 'submit' || type === 'button' || type === 'reset') return '[button ' + q(e.value || type) + ' ref=' + ref + ']';
      const ph = e.placeholder ? ' placeholder=' + q(e.placeholder) : '';
      const val = type === 'password' ? (e.value ? ' value=(hidden)' : '') : (e.value ? ' value=' + q(e.value) : '');
      return '[input type=' + type + name + ph + val + ' ref=' + ref + ']';
    }
    if (tag === 'textarea') return '[textarea' + name + (e.value ? ' value=' + q(e.value) : '') + ' ref=' + ref + ']';
    if (tag === 'select') {
      const opts = Array.from(e.options).map(o => q(o.value) + (o.selected ? ' (selected)' : '')).join(', ');
      return '[select' + name + ' options: ' + opts + ' ref=' + ref + ']';
    }
    return '[' + (tag === 'a' ? 'link' : 'button') + ' ' + q(e.innerText || e.getAttribute('aria-label') || e.title || '') + ' ref=' + ref + ']';
  };
  const drop = [];
  for (let i = 0; i < live.length && i < copies.length; i++) {
    const e = live[i], c = copies[i];
    if (!seen(e) && !e.closest('select')) { drop.push(c); continue; }
    if (!e.hasAttribute('data-odin-ref')) continue;
    if (e.tagName === 'A') {
      c.appendChild(document.createTextNode(' [ref=' + e.getAttribute('data-odin-ref') + ']'));
    } else {
      c.replaceWith(document.createTextNode(' ' + label(e) + ' '));
    }
  }
  drop.forEach(c => c.remove());
  return {url: location.href, title: document.title, html: '<html><head><title></title></head>' + (copy.tagName === 'BODY' ? copy.outerHTML : '<body>' + copy.outerHTML + '</body>') + '</html>'};
})()
