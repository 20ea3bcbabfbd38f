// A small bar chart as SVG, for the overview. The numbers are always in a table beside it
// (the table is what a screen reader reads); the SVG says in its name what it shows and its
// highest value. Bars are drawn in the text colour, so forced colours and dark mode keep it.

const SVG = "http://www.w3.org/2000/svg";

function svgElement(name, attributes = {}) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
  return element;
}

/**
 * @param {number[]} values one bar each, oldest first
 * @param {string} name what the chart shows, e.g. "Games running each minute of the last hour"
 */
export function barChart(values, name) {
  const width = 600, height = 120, gap = 1;
  const highest = Math.max(1, ...values);
  const svg = svgElement("svg", { viewBox: `0 0 ${width} ${height + 20}`, class: "chart", role: "img" });
  svg.setAttribute("aria-label", values.length
    ? `${name}: ${values.length} values, the highest ${Math.max(...values)}; the table beside it has each.`
    : `${name}: nothing sampled yet.`);
  svg.append(svgElement("line", { x1: 0, y1: height, x2: width, y2: height, class: "axis" }));
  const barWidth = values.length ? width / values.length : width;
  values.forEach((value, index) => {
    const barHeight = (value / highest) * (height - 4);
    svg.append(svgElement("rect", {
      x: index * barWidth + gap / 2, y: height - barHeight, width: Math.max(1, barWidth - gap), height: barHeight, class: "bar",
    }));
  });
  const top = svgElement("text", { x: 2, y: 12, class: "label" });
  top.textContent = String(highest);
  const bottom = svgElement("text", { x: 2, y: height + 16, class: "label" });
  bottom.textContent = "0";
  svg.append(top, bottom);
  return svg;
}
