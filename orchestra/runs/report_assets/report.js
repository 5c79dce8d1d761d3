
document.querySelectorAll('.filters button').forEach(function (b) {
  b.addEventListener('click', function () {
    var want = b.getAttribute('data-filter');
    document.querySelectorAll('.filters button').forEach(function (o) { o.classList.toggle('on', o === b); });
    document.querySelectorAll('#rollouts tr[data-status], details.rollout').forEach(function (row) {
      row.style.display = (want === 'all' || row.getAttribute('data-status') === want) ? '' : 'none';
    });
  });
});
document.querySelectorAll('#rollouts a').forEach(function (a) {
  a.addEventListener('click', function () {
    var target = document.getElementById(a.getAttribute('href').slice(1));
    if (target) { target.open = true; }
  });
});
// A link to a transcript (`report.html#r-NAME`, from another page or typed) opens it: a closed
// <details> would otherwise show only its summary line.
function openLinked() {
  var id = decodeURIComponent(location.hash.slice(1));
  var target = id ? document.getElementById(id) : null;
  if (target && target.tagName === 'DETAILS') {
    target.open = true;
    target.scrollIntoView();
  }
}
window.addEventListener('hashchange', openLinked);
openLinked();
