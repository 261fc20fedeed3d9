// Charts of the staff dashboard (Chart.js, vendored in static/vendor/chartjs).
(function () {
  "use strict";
  const node = document.getElementById("dashboard-data");
  if (!node || typeof Chart === "undefined") return;
  const data = JSON.parse(node.textContent);
  const colors = { BB: "#0f5132", HB: "#c77d0a", HH: "#7a4fb3", nil: "#b3261e", not_nil: "#0f5132" };
  Chart.defaults.font.family = getComputedStyle(document.body).fontFamily;
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;

  function draw(id, config) {
    const canvas = document.getElementById(id);
    if (canvas) new Chart(canvas, config);
  }

  // Figure 4: points per round by sum of bids, one line per make-up.
  const f4 = data.points_by_bid_sum.rows;
  const makeups = ["BB", "HB", "HH"].filter((m) => f4.some((r) => r.by_makeup[m]));
  draw("chart-points-by-bid-sum", {
    type: "bar",
    data: {
      labels: f4.map((r) => String(r.bid_sum)),
      datasets: makeups.map((m) => ({
        label: data.makeup_labels[m],
        backgroundColor: colors[m],
        data: f4.map((r) => (r.by_makeup[m] ? r.by_makeup[m].points_per_round : null)),
      })),
    },
    options: {
      scales: { x: { title: { display: true, text: "sum of the four bids" } },
                y: { title: { display: true, text: "average points per round" } } },
      plugins: { tooltip: { callbacks: { afterLabel: (ctx) => {
        const c = f4[ctx.dataIndex].by_makeup[makeups[ctx.datasetIndex]];
        return c ? "n = " + c.partnership_rounds : "";
      } } } },
    },
  });

  // Figure 5: distribution of the sum of bids.
  const f5 = data.bid_sums.rows;
  draw("chart-bid-sums", {
    type: "bar",
    data: {
      labels: f5.map((r) => String(r.bid_sum)),
      datasets: [{ label: "share of rounds", backgroundColor: "#2f7d57",
                   data: f5.map((r) => 100 * r.share) }],
    },
    options: {
      plugins: { legend: { display: false },
                 tooltip: { callbacks: { afterLabel: (ctx) => "n = " + f5[ctx.dataIndex].rounds } } },
      scales: { x: { title: { display: true, text: "sum of the four bids" } },
                y: { title: { display: true, text: "% of rounds" } } },
    },
  });

  // Figure 2: histogram of points per round, nil vs not nil (share of each group).
  const h = data.points_histogram;
  const share = (group) => {
    const byEdge = new Map(group.bins.map((b) => [b.from, b.count]));
    return h.edges.map((e) => (group.seat_rounds ? (100 * (byEdge.get(e) || 0)) / group.seat_rounds : 0));
  };
  draw("chart-points-histogram", {
    type: "bar",
    data: {
      labels: h.edges.map((e) => String(e)),
      datasets: [
        { label: "seat bid nil (n = " + h.nil.seat_rounds + ")", backgroundColor: colors.nil, data: share(h.nil) },
        { label: "seat bid non-nil (n = " + h.not_nil.seat_rounds + ")", backgroundColor: colors.not_nil, data: share(h.not_nil) },
      ],
    },
    options: {
      scales: { x: { title: { display: true, text: "points of the seat's partnership in the round (bin start)" } },
                y: { title: { display: true, text: "% of seat-rounds" } } },
    },
  });
})();
