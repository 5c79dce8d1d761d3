
Object.keys(FIGURES).forEach(function (id) {
  var fig = FIGURES[id];
  Plotly.newPlot(id, fig.data, fig.layout, CONFIG);
});
