export default function (pi) {}
