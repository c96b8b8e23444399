// remodel report: draws the book's ```mermaid blocks with the bundled mermaid.min.js (no network).
// mdBook renders such a block as <pre><code class="language-mermaid">; Mermaid wants the diagram
// text in an element of class "mermaid", so each block is swapped for one before rendering.
(function () {
  if (typeof mermaid === 'undefined') {
    return;
  }
  var blocks = document.querySelectorAll('code.language-mermaid');
  if (blocks.length === 0) {
    return;
  }
  blocks.forEach(function (code) {
    var pre = code.parentElement;
    var target = document.createElement('pre');
    target.className = 'mermaid';
    target.textContent = code.textContent;
    pre.parentElement.replaceChild(target, pre);
  });
  var root = document.documentElement.classList;
  var dark = ['coal', 'navy', 'ayu'].some(function (t) { return root.contains(t); });
  mermaid.initialize({ startOnLoad: false, securityLevel: 'strict', theme: dark ? 'dark' : 'default' });
  mermaid.run({ querySelector: 'pre.mermaid' });
})();
