
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
