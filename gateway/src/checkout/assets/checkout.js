// The hosted checkout's script (gateway/src/checkout): copy buttons, the countdown to the payment's
// expiry and its status kept current without a reload. The page is complete without it.
"use strict";
(function () {
  var main = document.getElementById("checkout");
  if (!main) return;

  document.querySelectorAll("button[data-copy]").forEach(function (button) {
    var label = button.textContent;
    var value = document.getElementById(button.dataset.copy);
    button.hidden = false;
    button.addEventListener("click", function () {
      navigator.clipboard.writeText(value.textContent).then(
        function () {
          button.textContent = button.dataset.copied;
          setTimeout(function () { button.textContent = label; }, 2000);
        },
        function () {
          // The clipboard refused (a denied permission): select the value for the payer to copy.
          var range = document.createRange();
          range.selectNodeContents(value);
          getSelection().removeAllRanges();
          getSelection().addRange(range);
        },
      );
    });
  });

  var countdown = document.getElementById("countdown");
  if (countdown) {
    var end = Date.parse(countdown.getAttribute("datetime"));
    var pad = function (n) { return String(n).padStart(2, "0"); };
    var tick = function () {
      var left = Math.max(0, Math.floor((end - Date.now()) / 1000));
      var hours = Math.floor(left / 3600);
      var minutes = Math.floor((left % 3600) / 60);
      countdown.textContent = (hours ? hours + ":" + pad(minutes) : String(minutes)) + ":" + pad(left % 60);
      if (left === 0) clearInterval(timer);
    };
    var timer = setInterval(tick, 1000);
    tick();
  }

  var statusUrl = main.dataset.statusUrl;
  if (!statusUrl) return;
  var every = Number(main.dataset.pollMs);
  var status = document.getElementById("status");
  var message = document.getElementById("status-message");

  // Statuses only move towards the end: parts of the page the new one does not show go for good.
  function show(answer) {
    status.dataset.status = answer.status;
    status.textContent = answer.title;
    message.textContent = answer.message;
    document.querySelectorAll("[data-while]").forEach(function (part) {
      if (part.dataset.while.split(" ").indexOf(answer.status) < 0) part.remove();
    });
    var problem = document.querySelector(".problem");
    if (problem) problem.remove();
  }

  function poll() {
    fetch(statusUrl, { headers: { accept: "application/json" }, cache: "no-store" })
      .then(function (res) { return res.ok ? res.json() : null; })
      .then(
        function (answer) {
          if (answer && answer.status !== status.dataset.status) show(answer);
          if (!answer || !answer.final) setTimeout(poll, every);
        },
        function () { setTimeout(poll, every); },
      );
  }
  setTimeout(poll, every);
})();
